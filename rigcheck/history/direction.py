"""Which way a figure gets worse, read from its unit: a trend must know it before it warns.

Every figure the catalogue lists today (rigcheck/figure_names.py) is a rate, TFLOP/s, GB/s or
tokens/s, where higher is better. A time (a latency, a step's seconds) is better lower. The
history keeps whatever figure a certificate recorded, so a unit that says neither gets no
direction: its trend may say the figure moved, never that it got worse.
"""

from __future__ import annotations

HIGHER, LOWER = 1, -1
TIME_UNITS = frozenset({"ns", "us", "µs", "ms", "s", "min", "h"})


def better_direction(unit: str) -> int | None:
    """HIGHER for a rate (any unit per second), LOWER for a time, None when the unit is neither."""
    if unit in TIME_UNITS:
        return LOWER
    if unit.endswith("/s"):
        return HIGHER
    return None
