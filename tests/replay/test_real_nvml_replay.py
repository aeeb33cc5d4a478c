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


def hgx_h100(tmp_path, driver, replays=0):
    machine = machine_profile("h100_hgx")
    for gpu in machine["gpus"]:
        gpu["pcie"]["replays"] = replays if replays is not None else gpu["pcie"]["replays"]
    base = synthetic_snapshot(load_spec("h100"), gpus=8)
    snapshot, lib = simulated_snapshot(base, machine, driver, fake_sysfs(tmp_path, machine))
    assert not lib.crashes, lib.crashes
    return snapshot


@pytest.mark.parametrize("driver", ["R535", "R580"])
def test_healthy_hgx_h100_read_through_pynvml_passes_every_fact_check(replay, tmp_path, driver):
    result = replay(hgx_h100(tmp_path, driver), "-m", "h100", "--gpus", "8")
    assert not result.errors, result.describe()
    assert not result.failed, result.describe()
    assert result.ret == pytest.ExitCode.OK, result.describe()


def test_the_captured_replay_counts_fail_the_replay_limit(replay, tmp_path):
    """Pins the finding above, so a change to the limit or the capture shows here."""
    result = replay(hgx_h100(tmp_path, "R580", replays=None), "-m", "h100", "--gpus", "8")
    assert set(result.failed) == {REPLAYS_ABOVE_LIMIT}, result.describe()
    assert "174 replays" in result.failed[REPLAYS_ABOVE_LIMIT], result.describe()
