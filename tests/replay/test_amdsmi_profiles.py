"""The MI300X platform profile (rigcheck/testing/amdsmi_sim/profiles/mi300x_8gpu.json: values from
public
amd-smi and rocm-smi outputs, each with its source) read through each real amdsmi release and
judged by the suites: a healthy 8-GPU MI300X node passes every fact check on every release
(before ROCm 6.4 its xGMI links are read from the topology: rigcheck/facts/amd/smi.py)."""

from __future__ import annotations

import copy

import pytest
from amd_real import RELEASES, healthy_node, probe

from rigcheck.testing.amdsmi_sim import import_amdsmi
from rigcheck.testing.amdsmi_sim.profiles import node_from_profile


def profiled_snapshot(release, monkeypatch, tmp_path):
    """The synthetic node's host and torch view, its AMD facts read from the profile."""
    snapshot = healthy_node()
    buses = [d["pci_bus_id"] for d in snapshot["software"]["torch"]["devices"]]
    simulated = node_from_profile("mi300x_8gpu", buses)
    module = import_amdsmi(simulated, path=release)
    devices, other = probe(copy.deepcopy(snapshot), release, monkeypatch, tmp_path, module=module)
    snapshot["devices"] = devices
    snapshot["topology"]["pairs"] = other["topology"]["pairs"]
    snapshot["software"]["rocm"]["amdsmi_lib"] = other["rocm"]["amdsmi_lib"]
    return snapshot, simulated


@pytest.mark.parametrize("release", RELEASES)
def test_the_mi300x_profile_passes_every_fact_check(release, replay, monkeypatch, tmp_path):
    snapshot, _ = profiled_snapshot(release, monkeypatch, tmp_path)
    result = replay(snapshot, "-m", "mi300x", "--gpus", "8")
    assert not result.errors, result.describe()
    assert set(result.failed) == set(), result.describe()


@pytest.mark.parametrize("release", RELEASES[:1])  # the installed, newest release
def test_the_profile_reads_as_its_sources_say(release, monkeypatch, tmp_path):
    snapshot, simulated = profiled_snapshot(release, monkeypatch, tmp_path)
    device = snapshot["devices"][0]
    assert not simulated.unwritten, "a profile field the release's structs do not have"
    assert device["power_cap"] == {"cap_w": 750.0, "default_w": 750.0, "max_w": 750.0}
    assert device["amd_temperature"] == {"hotspot_c": 39, "slowdown_c": 100, "shutdown_c": 110}
    assert device["amd_firmware"]["vbios"] == "022.040.003.042.000001"
    assert device["amd_firmware"]["blocks"] == {"AMDSMI_FW_ID_PM": "00.85.129.03"}
    assert device["xgmi"] == {"total_links": 7, "up": 7, "down": 0, "disabled": 0,
                              "error_status": None}  # fmt: skip
    assert device["bad_pages"]["threshold"] is None
    assert snapshot["software"]["rocm"]["amdsmi_lib"] == "25.3.0"
