"""NVML's GPU recovery action (NVML_FI_DEV_GET_GPU_RECOVERY_ACTION, answered from R565) through
the real pynvml's nvmlDeviceGetFieldValues, and the check that judges it. Found by the coverage
campaign (issue 40): the driver's own request to reset or drain a GPU was read by no check, so
a node whose Xid 154 had left the log window passed."""

from __future__ import annotations

import pytest

from rigcheck.facts.nvidia.nvml import probe_nvidia
from rigcheck.testing.nvml_sim import machine_profile, simulated_nvml


def actions(driver: str, asked: dict[int, int]) -> list:
    machine = machine_profile("h100_hgx")
    for index, code in asked.items():
        machine["gpus"][index]["recovery_action"] = code
    with simulated_nvml(machine, driver) as lib:
        _, devices = probe_nvidia()
    assert not lib.crashes, lib.crashes
    return [d["recovery_action"] for d in devices]


@pytest.mark.parametrize("driver", ["R570", "R580"])
def test_each_gpu_reads_its_own_recovery_action(driver):
    got = actions(driver, {2: 4, 5: 1})  # drain and reset; GPU reset (nvmlGpuRecoveryAction_t)
    assert got == ["none", "none", "drain_and_reset", "none", "none", "gpu_reset", "none", "none"]


@pytest.mark.parametrize("driver", ["R470", "R535", "R550"])
def test_a_driver_before_r565_does_not_answer_it(driver):
    assert actions(driver, {2: 4}) == [None] * 8
