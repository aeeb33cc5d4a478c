"""Exponents from timings at several sizes: time ~ size**k, k the least-squares slope of
log(time) against log(size). k near 1 is linear, 2 quadratic."""

from __future__ import annotations

import math
import resource
import tracemalloc
from collections.abc import Callable
from typing import Any


def exponent(points: list[tuple[float, float]]) -> float | None:
    """The slope of log(y) on log(x) over (x, y) points; None with fewer than two sizes."""
    pts = [(math.log(x), math.log(y)) for x, y in points if x > 0 and y > 0]
    if len({x for x, _ in pts}) < 2:
        return None
    mean_x = sum(x for x, _ in pts) / len(pts)
    mean_y = sum(y for _, y in pts) / len(pts)
    spread = sum((x - mean_x) ** 2 for x, _ in pts)
    return sum((x - mean_x) * (y - mean_y) for x, y in pts) / spread


def peak_mib(work: Callable[[], Any]) -> float:
    """Peak Python allocation of one untimed call, in MiB (tracemalloc slows it: never timed)."""
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def max_rss_mib() -> float:
    """This process's peak resident set so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
