"""MI300X snapshots as hosts without amdsmi, or guests that answer NOT_SUPPORTED, record them:
the AMD checks fail closed naming the reason, never crash, and a Not Supported the check can
live with (bad pages in an SR-IOV guest) is not a failure."""

import copy
import json
from pathlib import Path

import pytest

from rigcheck.facts.amd import smi as amd_smi
from rigcheck.spec import load_spec
from rigcheck.testing.synthetic import synthetic_snapshot

SNAPSHOTS = Path(__file__).resolve().parents[2] / "fixtures" / "snapshots"
MI300X = json.loads((SNAPSHOTS / "mi300x.json").read_text())
NO_AMDSMI = {"error": "amdsmi is not usable here (ModuleNotFoundError: No module named 'amdsmi')"}
AMD_CHECKS = {
    "test_amd_ecc_enabled",
    "test_amd_no_uncorrectable_ecc_errors",
    "test_amd_corrected_ecc_within_ceiling",
    "test_amd_power_cap_not_capped",
    "test_amd_pcie_generation",
    "test_amd_pcie_width",
    "test_amd_pcie_replays_within_limit",
    "test_amd_firmware_identical_across_gpus",
    "test_amd_idle_temperature_below_slowdown",
    "test_amd_no_violation_at_idle",
}


def test_without_amdsmi_every_amd_check_fails_closed_with_the_reason(replay):
    snapshot = copy.deepcopy(MI300X)
    for device in snapshot["devices"]:
        device.update({key: dict(NO_AMDSMI) for key in amd_smi.KEYS})
    result = replay(snapshot, "-m", "mi300x", "-k", "amd")
    assert not result.errors, result.describe()
    # bad pages: an error record is not NOT_SUPPORTED, so it fails too (it is judged).
    assert set(result.failed) == AMD_CHECKS | {"test_amd_bad_pages"}, result.describe()
    for message in result.failed.values():
        assert "cannot judge" in message and "amdsmi is not usable here" in message


def test_not_supported_where_the_class_needs_it_fails_and_where_it_can_live_with_it_passes(
    replay,
):
    snapshot = copy.deepcopy(MI300X)
    device = snapshot["devices"][0]
    device["power_cap"] = None  # NOT_SUPPORTED: the power cap cannot be judged
    device["bad_pages"] = None  # NOT_SUPPORTED in an SR-IOV guest: the host retires pages
    result = replay(snapshot, "-m", "mi300x", "-k", "amd")
    assert not result.errors, result.describe()
    assert set(result.failed) == {"test_amd_power_cap_not_capped"}, result.describe()
    assert "not supported" in result.failed["test_amd_power_cap_not_capped"]


@pytest.mark.parametrize(
    ("key", "field"), [("amd_temperature", None), ("slowdown_c", "slowdown_c")]
)
def test_a_temperature_or_threshold_not_reported_fails_closed(replay, key, field):
    """No hotspot reading, or no slowdown threshold: idle heat cannot be judged, never passes."""
    snapshot = copy.deepcopy(MI300X)
    device = snapshot["devices"][0]
    if field is None:
        device["amd_temperature"] = None  # NOT_SUPPORTED
    else:
        device["amd_temperature"][field] = None
    result = replay(snapshot, "-m", "mi300x", "-k", "amd_idle")
    assert not result.errors, result.describe()
    assert set(result.failed) == {"test_amd_idle_temperature_below_slowdown"}, result.describe()
    assert key in result.failed["test_amd_idle_temperature_below_slowdown"]


def test_an_amd_topology_missing_a_pair_fails_the_topology_check(replay):
    """facts/amd/topology.py writes NVML's shape, so the NVML check judges AMD nodes as they are."""
    snapshot = synthetic_snapshot(load_spec("mi300x"), gpus=8)
    snapshot["topology"]["pairs"] = snapshot["topology"]["pairs"][1:]
    result = replay(snapshot, "-m", "mi300x", "-k", "topology_lists_every_gpu")
    assert set(result.failed) == {"test_topology_lists_every_gpu"}, result.describe()
    assert "27 pairs" in result.failed["test_topology_lists_every_gpu"]


def test_an_application_page_fault_in_the_log_warns_and_passes(replay):
    """A program's page fault is the program's fault (kernel_log/amdgpu.py): reported only."""
    snapshot = copy.deepcopy(MI300X)
    snapshot["kernel_log"]["amdgpu_events"] = [
        {
            "t_s": 120.5,
            "bus_id": "0000:18:00.0",
            "text": "amdgpu: [gfxhub0] no-retry page fault (src_id:0 ring:24 vmid:8 pasid:32770)",
        }
    ]
    snapshot["kernel_log"]["amdgpu_count"] = 1
    result = replay(snapshot, "-m", "mi300x", "-k", "amdgpu_faults")
    assert result.ret == 0 and not result.failed, result.describe()
    assert "page_fault x1 on GPU 0" in result.output
