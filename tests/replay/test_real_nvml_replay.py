"""A healthy HGX H100 whose NVML facts rigcheck read through the real pynvml, over a simulated
libnvidia-ml answering what NVIDIA's own 8x H100 capture shows, passes every h100 fact check.

The simulator and its profiles: rigcheck/testing/nvml_sim. The rest of the snapshot is the
synthetic one.
"""

from __future__ import annotations

import pytest

from rigcheck.spec import load_spec
from rigcheck.testing.nvml_sim import machine_profile
from rigcheck.testing.nvml_sim.snapshot import fake_sysfs, simulated_snapshot
from rigcheck.testing.synthetic import synthetic_snapshot

# The capture (driver 580.105.08) counts 106-174 PCIe replays per GPU since its driver loaded,
# above h100's pcie_replays_max (80, DCGM's per-run allowance). Judged as a rate since boot, as
# DCGM's health watch judges it (rigcheck/replay_rate.py), a day's uptime makes that
# 0.07-0.12/min against the 31/min a Gen5 x16 link may make: the node passes. Before that rule
# this replay zeroed the counts to pass (note i22n.md finding 11).
REPLAYS_CHECK = "test_pcie_replays_within_limit"


def read_through_pynvml(tmp_path, machine, spec, driver=None):
    """The class's synthetic snapshot with the NVML facts rigcheck reads from `machine`."""
    base = synthetic_snapshot(load_spec(spec), gpus=len(machine["gpus"]))
    snapshot, lib = simulated_snapshot(base, machine, driver, fake_sysfs(tmp_path, machine))
    assert not lib.crashes, lib.crashes
    return snapshot


def hgx_h100(tmp_path, driver):
    """NVIDIA's 8x H100 capture as it is, replay counts included."""
    return read_through_pynvml(tmp_path, machine_profile("h100_hgx"), "h100", driver)


def test_healthy_hgx_h100_read_through_pynvml_passes_every_fact_check(replay, tmp_path):
    """Under R535, the first driver with every call rigcheck reads (tests/realnvml covers the
    other generations probe by probe)."""
    result = replay(hgx_h100(tmp_path, "R535"), "-m", "h100", "--gpus", "8")
    assert not result.errors, result.describe()
    assert not result.failed, result.describe()
    assert result.ret == pytest.ExitCode.OK, result.describe()


def test_the_captured_replay_counts_pass_over_a_days_uptime(replay, tmp_path):
    """The capture's own counts (106-174, above the allowance of 80) are judged as a rate and
    pass; the same counts within a minute of boot are a fault (174/min > 31/min)."""
    snapshot = hgx_h100(tmp_path, "R580")
    assert max(d["pcie_replays"] for d in snapshot["devices"]) == 174  # the capture, not zeroed
    assert snapshot["kernel_log"]["uptime_s"] == 86400.0  # the synthetic host: a day up
    passed = replay(snapshot, "-m", "h100", "--gpus", "8", "-k", "pcie_replays")
    assert not passed.failed and passed.ret == pytest.ExitCode.OK, passed.describe()
    assert "1 passed" in passed.output, passed.describe()  # it ran: not skipped
    snapshot["kernel_log"]["uptime_s"] = 60.0
    failed = replay(snapshot, "-m", "h100", "--gpus", "8", "-k", "pcie_replays")
    assert (
        "174 replays in 0.02 h = 174.0/min, above the 31/min a Gen5 x16 link allows"
        in (failed.failed[REPLAYS_CHECK])
    ), failed.describe()


# What each other capture fails on its class, and why: each a fact of the real machine
# (rigcheck/testing/nvml_sim/profiles/machines/*.json name the capture), not a defect of the probes.
CAPTURE_FINDINGS = {
    # NVIDIA's capture of a single-GPU A100 VM: nothing.
    ("a100_sxm", "a100_40gb"): set(),
    # Persistence mode is Disabled on every GPU of NVIDIA's 8x B200 capture.
    ("b200_hgx", "b200"): {"test_persistence_mode"},
    # AWS g6e.2xlarge (a pass-through VM): the L40S's link reads x8 at Gen4, max x16. The
    # facts judge the maximum (x16: the slot and board can train it); the width under load is
    # the burn-in's to judge, against the platform's allowance (issue 35).
    ("l40s", "l40s"): set(),
}


@pytest.mark.parametrize(("profile", "spec"), sorted(CAPTURE_FINDINGS))
def test_each_capture_read_through_pynvml_fails_only_what_the_machine_shows(
    replay, tmp_path, profile, spec
):
    machine = machine_profile(profile)
    snapshot = read_through_pynvml(tmp_path, machine, spec)
    result = replay(snapshot, "-m", spec, "--gpus", str(len(machine["gpus"])))
    assert not result.errors, result.describe()
    assert set(result.failed) == CAPTURE_FINDINGS[profile, spec], result.describe()


def test_the_b200_captures_persistence_mode_fails_with_the_daemons_advice(replay, tmp_path):
    """Disabled on all 8 GPUs of NVIDIA's B200 capture: a real state (suites/facts/
    test_health.py::test_persistence_mode says why), so it fails, naming every GPU and the
    daemon that fixes it."""
    machine = machine_profile("b200_hgx")
    result = replay(read_through_pynvml(tmp_path, machine, "b200"), "-m", "b200", "--gpus", "8")
    message = result.failed["test_persistence_mode"]
    assert all(f"GPU {i} (" in message for i in range(8)), result.describe()
    assert "`sudo systemctl enable --now nvidia-persistenced`" in message, result.describe()


def test_a_vgpu_guest_fails_closed_naming_what_it_cannot_read(replay, tmp_path):
    """rigcheck/testing/nvml_sim/profiles/machines/vgpu_a100.json: NotSupported and NoPermission
    reads."""
    snapshot = read_through_pynvml(tmp_path, machine_profile("vgpu_a100"), "a100_40gb")
    result = replay(snapshot, "-m", "a100_40gb", "--gpus", "1")
    assert not result.errors, result.describe()
    assert set(result.failed) == {
        "test_pcie_replays_within_limit",
        "test_boost_clock_ceiling_at_board_max",
        "test_firmware_identical_across_gpus",
    }, result.describe()
    for message in result.failed.values():
        assert "cannot judge" in message, result.describe()
    assert "NoPermission" in result.failed["test_firmware_identical_across_gpus"]
