"""rigcheck/replay_rate.py: DCGM's per-minute replay ceiling and the rate judged against it.

The expected figures are DCGM's own table (NVIDIA/DCGM@72fa3fe modules/health/
DcgmHealthWatch.cpp GetExpectedPcieReplayRate: 0.15, 0.3, 0.48, 0.96, 1.92, 3.84 per lane per
minute, times the lanes, rounded up), worked out by hand here.
"""

import pytest

from rigcheck.replay_rate import replays_allowed_per_minute, replays_per_minute, too_fast


@pytest.mark.parametrize(
    ("gen", "lanes", "allowed"),
    [
        (1, 1, 1),  # 0.15 -> 1
        (1, 16, 3),  # 2.4 -> 3
        (2, 16, 5),  # 4.8 -> 5
        (3, 16, 8),  # 7.68 -> 8: the flat limit DCGM had before 3.3.8
        (4, 16, 16),  # 15.36 -> 16
        (4, 8, 8),  # 7.68 -> 8
        (5, 16, 31),  # 30.72 -> 31
        (5, 8, 16),  # 15.36 -> 16
        (6, 16, 62),  # 61.44 -> 62
        (7, 16, 62),  # past DCGM's table: capped at Gen6, as DCGM does
    ],
)
def test_allowed_rate_is_dcgms(gen, lanes, allowed):
    assert replays_allowed_per_minute(gen, lanes) == allowed


@pytest.mark.parametrize(("gen", "lanes"), [(0, 16), (5, 0)])
def test_no_link_has_no_allowance(gen, lanes):
    with pytest.raises(ValueError, match="no PCIe link"):
        replays_allowed_per_minute(gen, lanes)


def test_rate_is_per_minute():
    assert replays_per_minute(120, 60.0) == 120.0
    assert replays_per_minute(174, 86400.0) == pytest.approx(0.1208, abs=1e-4)


def test_a_zero_interval_gives_no_rate():
    with pytest.raises(ValueError, match="cannot give a rate"):
        replays_per_minute(5, 0.0)


def test_at_the_ceiling_passes_and_one_more_fails():
    """Gen5 x16 allows 31/min: 31 in a minute passes, 32 fails (DCGM warns on rate > expected)."""
    assert too_fast(31, 60.0, 5, 16) is None
    found = too_fast(32, 60.0, 5, 16)
    assert found == "32 replays in 0.02 h = 32.0/min, above the 31/min a Gen5 x16 link allows"


def test_the_captured_h100_counts_over_a_day_pass():
    """NVIDIA's 8x H100 capture (106-174 per GPU) over a day's uptime: far below 31/min."""
    assert too_fast(174, 86400.0, 5, 16) is None


def test_the_link_width_counts():
    """Gen5 x8 allows 16/min (equal passes, 17 fails); x16 allows 31/min."""
    assert too_fast(16, 60.0, 5, 8) is None
    assert too_fast(17, 60.0, 5, 8) is not None
    assert too_fast(17, 60.0, 5, 16) is None


def test_the_generation_counts():
    assert too_fast(9, 60.0, 3, 16) is not None  # Gen3 x16: 8/min
    assert too_fast(9, 60.0, 4, 16) is None  # Gen4 x16: 16/min


@pytest.mark.parametrize(("seconds", "gen", "lanes"), [(0.0, 5, 16), (60.0, 0, 16), (60.0, 5, 0)])
def test_no_rate_is_a_finding_not_a_pass(seconds, gen, lanes):
    found = too_fast(500, seconds, gen, lanes)
    assert found is not None and "no rate" in found
