"""Trends know which way is worse: a time rising is a drift, a time falling is not.

Every catalogue figure today is a rate (TFLOP/s, GB/s, tokens/s: higher is better), but the
history keeps whatever figure a certificate recorded, and the trend used to read every figure as
higher-is-better: a latency doubling passed and a latency halving warned. The values below are
written by hand to sit on either side of the band.
"""

from __future__ import annotations

import pytest

from rigcheck.history.direction import HIGHER, LOWER, better_direction
from rigcheck.history.trends import Point, drift

WEEKLY = [f"2026-10-{day:02d}T09:00:00Z" for day in (1, 8, 15, 22, 29)]


def points(values: list[float]) -> list[Point]:
    return [Point(at, v) for at, v in zip(WEEKLY, values, strict=True)]


@pytest.mark.parametrize(
    ("unit", "direction"),
    [
        ("TFLOP/s", HIGHER),
        ("GB/s", HIGHER),
        ("tokens/s", HIGHER),
        ("s", LOWER),
        ("ms", LOWER),
        ("us", LOWER),
        ("µs", LOWER),
        ("ns", LOWER),
        ("W", None),
        ("count", None),
        ("", None),
    ],
)
def test_the_unit_says_which_way_is_better(unit, direction):
    assert better_direction(unit) == direction


def test_a_latency_rising_past_the_band_drifts():
    found = drift("node-07", "allreduce_latency_us", "us", points([20, 21, 20, 21, 24]), 0.1)
    assert found is not None and found.baseline == 20.5 and found.latest == 24
    assert found.text() == (
        "node-07: allreduce_latency_us drifted 17% above its own median 20.5 us (band 10%, "
        f"lower is better): 24 us now, slope {found.slope_per_day:+,.3g} us/day from "
        "2026-10-01 to 2026-10-29 (5 runs)"
    )


@pytest.mark.parametrize(
    ("values", "why"),
    [
        ([20, 21, 20, 21, 12], "a latency falling: better, no drift"),
        ([20, 21, 20, 21, 22.55], "10% above 20.5 is 22.55: at the band's edge, no drift"),
        ([20, 21, 20, 21, 22.5], "9.8% above: inside the band"),
        ([40, 10, 10, 12, 13], "18% above the median 11, but the series falls overall"),
        ([20, 21, 20, 21, 22.6], "just past the band and rising: warns"),
    ],
)
def test_a_lower_is_better_series_warns_only_when_worse(values, why):
    found = drift("n", "f", "ms", points(values), 0.1)
    assert (found is not None) == ("warns" in why), why


def test_a_rate_rising_is_still_no_drift_and_falling_is():
    assert drift("n", "f", "GB/s", points([20, 21, 20, 21, 24]), 0.1) is None
    found = drift("n", "f", "GB/s", points([20, 21, 20, 21, 18]), 0.1)
    assert found is not None and "drifted 12% below its own median" in found.text()
    assert "better" not in found.text()


@pytest.mark.parametrize(
    ("values", "word"), [([20, 21, 20, 21, 24], "above"), ([20, 21, 20, 21, 17], "below")]
)
def test_a_unit_of_unknown_direction_moves_either_way_without_calling_it_worse(values, word):
    found = drift("n", "gpu_power", "W", points(values), 0.1)
    assert found is not None
    assert f"gpu_power moved {abs(found.latest / found.baseline - 1):.0%} {word} its own " in (
        found.text()
    )
    assert "(band 10%, which way is better is not known for W)" in found.text()


def test_a_unit_of_unknown_direction_inside_the_band_or_against_its_slope_is_quiet():
    assert drift("n", "f", "W", points([20, 21, 20, 21, 22.5]), 0.1) is None
    assert drift("n", "f", "W", points([40, 10, 10, 12, 13]), 0.1) is None


@pytest.mark.parametrize(
    ("unit", "values", "why"),
    [
        ("GB/s", [20, 20, 20, 20, 15], "exactly 25% below 20 (15.0): the band's edge, no drift"),
        ("GB/s", [20, 20, 20, 20, 14.99], "just past the edge, falling: warns"),
        ("ms", [20, 20, 20, 20, 25], "exactly 25% above 20 (25.0): the band's edge, no drift"),
        ("ms", [20, 20, 20, 20, 25.01], "just past the edge, rising: warns"),
        ("W", [20, 20, 20, 20, 15], "unknown way, at the lower edge: no drift"),
        ("W", [20, 20, 20, 20, 25], "unknown way, at the upper edge: no drift"),
        ("GB/s", [10, 20, 20, 20, 10], "half the median, but a flat slope (0): no drift"),
        ("ms", [30, 20, 20, 20, 30], "1.5 x the median, but a flat slope (0): no drift"),
        ("W", [30, 20, 20, 20, 30], "unknown way, flat slope: no drift"),
    ],
)
def test_the_edges_of_the_band_and_a_flat_slope(unit, values, why):
    found = drift("n", "f", unit, points(values), 0.25)
    assert (found is not None) == ("warns" in why), why
