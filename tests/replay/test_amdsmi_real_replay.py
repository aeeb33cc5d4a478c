"""The fact suites on an 8-GPU MI300X node whose AMD facts were read through each real amdsmi
release (only libamd_smi simulated, tests/amd_real.py): a healthy node passes every fact check;
before ROCm 6.4 the xGMI check alone fails closed, naming the function that release lacks."""

from __future__ import annotations

import copy

import pytest
from amd_real import RELEASES, healthy_node, probe

from rigcheck.amdsmi_sim import release_of


def probed_snapshot(release, monkeypatch, tmp_path) -> dict:
    node = healthy_node()
    devices, other = probe(copy.deepcopy(node), release, monkeypatch, tmp_path)
    node["devices"] = devices
    node["topology"]["pairs"] = other["topology"]["pairs"]
    node["software"]["rocm"]["amdsmi_lib"] = other["rocm"]["amdsmi_lib"]
    return node


@pytest.mark.parametrize("release", RELEASES)
def test_a_healthy_node_read_through_real_amdsmi_passes_every_fact_check(
    release, replay, monkeypatch, tmp_path
):
    result = replay(probed_snapshot(release, monkeypatch, tmp_path), "-m", "mi300x", "--gpus", "8")
    assert not result.errors, result.describe()
    expected = set() if release_of(release) >= (6, 4) else {"test_amd_xgmi_links_up"}
    assert set(result.failed) == expected, result.describe()
    for message in result.failed.values():
        assert "amdsmi_get_gpu_xgmi_link_status" in message and "ROCm 6.4" in message
    assert "passed" in result.output, result.describe()
