"""The PCIe replay checks on replayed snapshots: a count above the class's allowance is judged
as a rate since boot (rigcheck/replay_rate.py); with no uptime to divide by, it fails closed."""

import copy
import json
from pathlib import Path

import pytest

SNAPSHOTS = Path(__file__).resolve().parents[2] / "fixtures" / "snapshots"
H100 = json.loads((SNAPSHOTS / "h100.json").read_text())
MI300X = json.loads((SNAPSHOTS / "mi300x.json").read_text())
NVIDIA_CHECK, AMD_CHECK = "test_pcie_replays_within_limit", "test_amd_pcie_replays_within_limit"


def h100(replays: int, **top) -> dict:
    snapshot = copy.deepcopy(H100)
    snapshot["devices"][0]["pcie_replays"] = replays
    snapshot.update(top)
    return snapshot


def test_within_the_allowance_needs_no_uptime(replay):
    """80 replays (the allowance) pass with no uptime known at all."""
    snapshot = h100(80, uptime={"error": "no /proc/uptime"})
    del snapshot["kernel_log"]
    result = replay(snapshot, "-m", "h100", "-k", "pcie_replays")
    assert not result.failed and result.ret == pytest.ExitCode.OK, result.describe()
    assert "1 passed" in result.output, result.describe()  # judged, not skipped


def test_above_the_allowance_with_no_uptime_fails_closed(replay):
    snapshot = h100(81, uptime={"error": "/proc/uptime unreadable: the host's uptime is unknown"})
    result = replay(snapshot, "-m", "h100", "-k", "pcie_replays")
    assert "cannot judge" in result.failed[NVIDIA_CHECK], result.describe()
    assert "uptime" in result.failed[NVIDIA_CHECK], result.describe()


def test_the_uptime_probe_wins_over_the_kernel_log(replay):
    """A live snapshot has both: /proc/uptime read by the uptime probe decides."""
    slow = h100(4500, uptime={"since_boot_s": 86400.0, "source": "/proc/uptime"})
    slow["kernel_log"]["uptime_s"] = 60.0
    result = replay(slow, "-m", "h100", "-k", "pcie_replays")
    assert not result.failed, result.describe()  # 3.1/min over a day
    fast = h100(4500, uptime={"since_boot_s": 600.0, "source": "/proc/uptime"})
    result = replay(fast, "-m", "h100", "-k", "pcie_replays")
    assert "4500 replays in 0.17 h = 450.0/min" in result.failed[NVIDIA_CHECK], result.describe()


def test_a_gen4_link_is_held_to_its_own_ceiling(replay):
    """20/min passes a Gen5 x16 link (31) and fails a Gen4 x16 one (16)."""
    snapshot = h100(1200, uptime={"since_boot_s": 3600.0, "source": "/proc/uptime"})
    assert not replay(snapshot, "-m", "h100", "-k", "pcie_replays").failed
    snapshot["devices"][0]["pcie"]["gen_max"] = 4
    result = replay(snapshot, "-m", "h100", "-k", "pcie_replays")
    assert "above the 16/min a Gen4 x16 link allows" in result.failed[NVIDIA_CHECK]


def test_amd_counts_are_judged_as_a_rate_too(replay):
    """MI300X at Gen5 x16: 1000 replays over a day pass, over ten minutes (100/min) fail."""
    snapshot = copy.deepcopy(MI300X)
    snapshot["devices"][0]["pcie_link"]["replays"] = 1000
    snapshot["uptime"] = {"since_boot_s": 86400.0, "source": "/proc/uptime"}
    assert AMD_CHECK not in replay(snapshot, "-m", "mi300x", "-k", "pcie_replays").failed
    snapshot["uptime"]["since_boot_s"] = 600.0
    result = replay(snapshot, "-m", "mi300x", "-k", "pcie_replays")
    assert "1000 replays in 0.17 h = 100.0/min" in result.failed[AMD_CHECK], result.describe()


def test_amd_at_the_allowance_passes_a_minute_after_boot_and_one_more_fails(replay):
    """80 (mi300x's pcie_replays_max) passes at any uptime; 81 in a minute is 81/min > 31."""
    snapshot = copy.deepcopy(MI300X)
    snapshot["uptime"] = {"since_boot_s": 60.0, "source": "/proc/uptime"}
    for count in (80, None):  # None: amdsmi's "N/A", not counted
        snapshot["devices"][0]["pcie_link"]["replays"] = count
        assert AMD_CHECK not in replay(snapshot, "-m", "mi300x", "-k", "pcie_replays").failed
    snapshot["devices"][0]["pcie_link"]["replays"] = 81
    result = replay(snapshot, "-m", "mi300x", "-k", "pcie_replays")
    assert "81 replays in 0.02 h = 81.0/min, above the 31/min" in result.failed[AMD_CHECK]
