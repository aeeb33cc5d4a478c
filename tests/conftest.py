"""Hypothesis profiles for the self-tests: `default` locally, `ci` (fixed seed, bounded) on CI."""

import os

from hypothesis import settings

settings.register_profile("default", max_examples=100)
# A fixed seed so CI failures reproduce; fewer examples and no per-example deadline so the run
# stays well inside CI's time on a 2-core machine.
settings.register_profile("ci", derandomize=True, max_examples=40, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "default")
