"""Measurements: the only code that runs timed kernels.

Every module imports torch inside its functions, never at import time, so the pytest plugin
(rigcheck.plugin.measure) stays light and a broken torch costs one failed check, not the session.
"""

from rigcheck.measure.measurement import Measurement

__all__ = ["Measurement"]
