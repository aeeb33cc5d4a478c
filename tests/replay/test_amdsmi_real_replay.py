"""The fact suites on an 8-GPU MI300X node whose AMD facts were read through each real amdsmi
release (only libamd_smi simulated, tests/amd_real.py): a healthy node passes every fact check.
Before ROCm 6.4 (no amdsmi_get_gpu_xgmi_link_status) the xGMI links are read from the topology
(amdsmi_topo_get_link_type), so those releases pass too; a GPU with a link missing fails."""

from __future__ import annotations

import copy

import pytest
from amd_real import RELEASES, healthy_node, probe

from rigcheck.testing.amdsmi_sim import release_of


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
    assert set(result.failed) == set(), result.describe()
    assert "passed" in result.output, result.describe()


@pytest.mark.parametrize("release", RELEASES)
def test_a_missing_xgmi_link_fails_naming_the_gpu(release, replay, monkeypatch, tmp_path):
    """GPU 3 reaches GPU 5 over PCIe (two hops) instead of its direct xGMI link."""
    node = healthy_node()
    pair = next(p for p in node["topology"]["pairs"] if p["gpus"] == [3, 5])
    pair["link"] = {"type": "pcie", "hops": 2}
    if release is None or release_of(release) >= (6, 4):  # these read the link's own state
        pytest.skip("ROCm 6.4+: the per-link status decides, tests/amdsmi_real covers it")
    devices, other = probe(copy.deepcopy(node), release, monkeypatch, tmp_path)
    node["devices"], node["topology"]["pairs"] = devices, other["topology"]["pairs"]
    result = replay(node, "-m", "mi300x", "--gpus", "8", "-k", "xgmi")
    message = result.failed["test_amd_xgmi_links_up"]
    for gpu in (3, 5):
        assert f"GPU {gpu} ({node['devices'][gpu]['pci']['bus_id']}): 6/7 xGMI links up" in (
            message
        ), result.describe()
    assert "GPU 0 " not in message, result.describe()
