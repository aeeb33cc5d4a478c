"""NVML's NotSupported (stored as None), as in a vGPU guest: a clear failure, never a crash."""

import copy
import json
from pathlib import Path

H100 = json.loads(
    (Path(__file__).resolve().parents[2] / "fixtures" / "snapshots" / "h100.json").read_text()
)
CHECKS = {
    "ecc": "test_ecc_enabled",
    "throttle_reasons": "test_no_throttle_at_idle",
    "power": "test_power_limit_not_capped",
    "persistence_mode": "test_persistence_mode",
    "processes": "test_no_other_processes",
}


def test_a_needed_fact_not_supported_fails_its_check_saying_so(replay):
    snapshot = copy.deepcopy(H100)
    for key in [*CHECKS, "pcie"]:
        snapshot["devices"][0][key] = None
    result = replay(snapshot, "-m", "h100")
    # The hidden-state checks read ECC and the process list too.
    also = {"test_ecc_stays_on_after_reboot", "test_memory_in_use_is_listed"}
    wanted = {*CHECKS.values(), "test_pcie_generation", "test_pcie_width", *also}
    assert set(result.failed) == wanted and not result.errors, result.describe()
    for name in wanted:
        assert "not supported by this device or driver" in result.failed[name], result.describe()


def test_context_a_vgpu_guest_cannot_read_leaves_the_check_its_fact(replay):
    """Power draw, the default limit and the device's own PCIe maximum only add context."""
    snapshot = copy.deepcopy(H100)
    device = snapshot["devices"][0]
    device["power"].update(draw_w=None, default_limit_w=None, max_limit_w=None, limit_w=500.0)
    device["pcie"].update(gen_device_max=None, gen_max=4)
    result = replay(snapshot, "-m", "h100")
    assert set(result.failed) == {"test_power_limit_not_capped", "test_pcie_generation"}
    assert (
        "GPU 0 (0000:18:00.0): 500 W (default ? W)" in result.failed["test_power_limit_not_capped"]
    ), result.describe()
    assert "Gen4 max in this slot (device Gen?)" in result.failed["test_pcie_generation"]


def test_ecc_on_without_error_counters_is_no_verdict_not_a_pass(replay):
    snapshot = copy.deepcopy(H100)
    snapshot["devices"][0]["ecc_errors"] = None
    result = replay(snapshot, "-m", "h100")
    assert set(result.failed) == {"test_no_uncorrected_ecc_errors"}, result.describe()
    assert "ecc_errors is not supported" in result.failed["test_no_uncorrected_ecc_errors"]
