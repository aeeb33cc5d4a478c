"""A healthy HGX H100 whose NVML facts rigcheck read through the real pynvml, over a simulated
libnvidia-ml answering what NVIDIA's own 8x H100 capture shows, passes every h100 fact check.

The simulator and its profiles: tests/nvml_sim. The rest of the snapshot is the synthetic one.
"""

from __future__ import annotations

import pytest
from nvml_sim import machine_profile
from nvml_sim.snapshot import fake_sysfs, simulated_snapshot

from rigcheck.facts.synthetic import synthetic_snapshot
from rigcheck.spec import load_spec

# The capture (driver 580.105.08) counts 106-174 PCIe replays per GPU since its driver loaded;
# rigcheck's h100 limit is 80 (DCGM's per-test figure), so the real node fails
# test_pcie_replays_within_limit. Whether that node is healthy is the spec's question (note
# i22n.md); this replay zeroes the counts to judge everything else the probes read.
REPLAYS_ABOVE_LIMIT = "test_pcie_replays_within_limit"


def read_through_pynvml(tmp_path, machine, spec, driver=None):
    """The class's synthetic snapshot with the NVML facts rigcheck reads from `machine`."""
    base = synthetic_snapshot(load_spec(spec), gpus=len(machine["gpus"]))
    snapshot, lib = simulated_snapshot(base, machine, driver, fake_sysfs(tmp_path, machine))
    assert not lib.crashes, lib.crashes
    return snapshot


def hgx_h100(tmp_path, driver, replays=0):
    machine = machine_profile("h100_hgx")
    for gpu in machine["gpus"]:
        gpu["pcie"]["replays"] = replays if replays is not None else gpu["pcie"]["replays"]
    return read_through_pynvml(tmp_path, machine, "h100", driver)


def test_healthy_hgx_h100_read_through_pynvml_passes_every_fact_check(replay, tmp_path):
    """Under R535, the first driver with every call rigcheck reads (tests/realnvml covers the
    other generations probe by probe)."""
    result = replay(hgx_h100(tmp_path, "R535"), "-m", "h100", "--gpus", "8")
    assert not result.errors, result.describe()
    assert not result.failed, result.describe()
    assert result.ret == pytest.ExitCode.OK, result.describe()


def test_the_captured_replay_counts_fail_the_replay_limit(replay, tmp_path):
    """Pins the finding above, so a change to the limit or the capture shows here."""
    result = replay(hgx_h100(tmp_path, "R580", replays=None), "-m", "h100", "--gpus", "8")
    assert set(result.failed) == {REPLAYS_ABOVE_LIMIT}, result.describe()
    assert "174 replays" in result.failed[REPLAYS_ABOVE_LIMIT], result.describe()


# What each other capture fails on its class, and why: each a fact of the real machine
# (tests/nvml_sim/profiles/machines/*.json name the capture), not a defect of the probes.
CAPTURE_FINDINGS = {
    # NVIDIA's capture of a single-GPU A100 VM: nothing.
    ("a100_sxm", "a100_40gb"): set(),
    # Persistence mode is Disabled on every GPU of NVIDIA's 8x B200 capture.
    ("b200_hgx", "b200"): {"test_persistence_mode"},
    # AWS g6e.2xlarge: the L40S's link reads x8 of x16 at idle.
    ("l40s", "l40s"): {"test_pcie_width"},
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


def test_a_vgpu_guest_fails_closed_naming_what_it_cannot_read(replay, tmp_path):
    """tests/nvml_sim/profiles/machines/vgpu_a100.json: NotSupported and NoPermission reads."""
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
