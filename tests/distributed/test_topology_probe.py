"""The topology probe through the real pynvml over a simulated libnvidia-ml
(rigcheck/testing/nvml_sim)
and a fake /sys: pairs, NVLink counts, P2P, NUMA."""

import os

import pynvml
import pytest

from rigcheck.facts.nvidia import topology
from rigcheck.facts.nvidia.topology import format_cpulist, nodes_of_cpus, parse_cpulist
from rigcheck.testing.nvml_sim import machine_profile, simulated_nvml

BUS = [f"0000:{b:02x}:00.0" for b in (0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB)]
SWITCH_BUS = "0000:05:00.0"
SOCKET_CPUS = ("0-31,64-95", "32-63,96-127")
P2P_STATUS = {0: "ok", 1: "chipset_not_supported"}


def hgx(gpus=8, links=18, down=(), switch=True, p2p=0, answers=None):
    """An HGX-like node: GPUs 0-3 on socket 0, 4-7 on socket 1, all NVLinks into NVSwitches
    (or, switch=False, each GPU's links straight to its twin); `down`: (GPU, link) pairs."""
    machine = machine_profile("h100_hgx")
    machine["gpus"] = machine["gpus"][:gpus]
    for i, gpu in enumerate(machine["gpus"]):
        gpu["pci"]["bus_id"] = BUS[i]
        gpu["cpu_affinity"] = SOCKET_CPUS[i // 4]
        gpu["nvlink"] = (
            None
            if not links
            else {
                "links": links,
                "version_code": 6,
                "remote": "switch" if switch else "gpu",
                "inactive": [link for g, link in down if g == i],
                "remote_bus_ids": [SWITCH_BUS if switch else BUS[i ^ 1]],
            }
        )
        gpu["answers"] = answers or {}
    half = [i // 4 for i in range(gpus)]
    machine["topology"] = {
        "pcie_paths": [["NODE" if a == b else "SYS" for b in half] for a in half],
        "p2p": dict.fromkeys(("read", "write", "nvlink", "atomics", "prop"), P2P_STATUS[p2p]),
    }
    return machine


@pytest.fixture
def probe(monkeypatch):
    """probe(machine, sysfs) -> the topology facts, on a host with the node's 128 CPUs."""
    monkeypatch.setattr(os, "cpu_count", lambda: 128)

    def run(machine, sysfs):
        with simulated_nvml(machine) as lib:
            topo = topology.probe_topology(sysfs)
        assert not lib.crashes, lib.crashes
        return topo

    return run


@pytest.fixture
def sysfs(tmp_path):
    """Two NUMA nodes of 64 CPUs each; GPU i's PCI device on node i // 4."""
    for node, cpus in enumerate(SOCKET_CPUS):
        (tmp_path / f"devices/system/node/node{node}").mkdir(parents=True)
        (tmp_path / f"devices/system/node/node{node}/cpulist").write_text(cpus + "\n")
    for i, bus in enumerate(BUS):
        (tmp_path / f"bus/pci/devices/{bus}").mkdir(parents=True)
        (tmp_path / f"bus/pci/devices/{bus}/numa_node").write_text(f"{i // 4}\n")
    return tmp_path


def test_an_nvswitch_node_reads_as_nv18_pairs_with_pcie_paths(probe, sysfs):
    topo = probe(hgx(), sysfs)
    assert len(topo["gpus"]) == 8 and len(topo["pairs"]) == 28
    first = topo["pairs"][0]
    assert first["gpus"] == [0, 1]
    assert first["nvlink"] == {"links": 18, "via": "nvswitch"}
    assert first["pcie_path"] == "NODE"
    assert first["p2p"] == {"read": "ok", "write": "ok", "nvlink": "ok", "atomics": "ok"}
    across = next(p for p in topo["pairs"] if p["gpus"] == [0, 4])
    assert across["pcie_path"] == "SYS"


def test_gpu_numa_node_and_cpu_affinity(probe, sysfs):
    gpus = probe(hgx(), sysfs)["gpus"]
    assert gpus[0]["bus_id"] == "0000:18:00.0"
    assert gpus[0]["numa_node"] == 0 and gpus[0]["cpu_numa_nodes"] == [0]
    assert gpus[0]["cpu_affinity"] == "0-31,64-95"
    assert gpus[5]["numa_node"] == 1 and gpus[5]["cpu_affinity"] == "32-63,96-127"


def test_a_link_down_narrows_every_pair_of_that_gpu(probe, sysfs):
    topo = probe(hgx(down={(3, 7)}), sysfs)
    pairs = {tuple(p["gpus"]): p["nvlink"]["links"] for p in topo["pairs"]}
    assert pairs[(0, 3)] == pairs[(3, 5)] == 17
    assert pairs[(0, 1)] == 18


def test_direct_links_count_per_peer(probe, sysfs):
    (pair,) = probe(hgx(gpus=2, links=4, switch=False), sysfs)["pairs"]
    assert pair["nvlink"] == {"links": 4, "via": "direct"}


def test_a_pcie_only_node_has_no_nvlink_and_p2p_statuses_are_named(probe, sysfs):
    pair = probe(hgx(links=0, p2p=1), sysfs)["pairs"][0]
    assert pair["nvlink"] == {"links": 0, "via": None}
    assert pair["p2p"]["read"] == "chipset_not_supported"


def test_failing_reads_become_error_records(probe, sysfs):
    machine = hgx(answers={"nvmlDeviceGetCpuAffinity": "UNKNOWN"})
    machine["answers"] = {"nvmlDeviceGetTopologyCommonAncestor": "UNKNOWN"}
    topo = probe(machine, sysfs)
    assert topo["pairs"][0]["pcie_path"] == {"error": "NVMLError_Unknown: Unknown Error"}
    assert topo["gpus"][0]["cpu_affinity"] == {"error": "NVMLError_Unknown: Unknown Error"}
    assert "error" in topo["gpus"][0]["cpu_numa_nodes"]
    assert topo["pairs"][0]["nvlink"]["links"] == 18  # the rest is still read


def test_no_driver_is_an_error_record(monkeypatch, sysfs):
    """No simulator: pynvml's own CDLL("libnvidia-ml.so.1") fails, as without a driver."""
    monkeypatch.setattr(pynvml, "nvmlLib", None)
    monkeypatch.setattr(pynvml, "CDLL", _no_library)
    assert "NVML Shared Library Not Found" in topology.probe_topology(sysfs)["error"]


def _no_library(name):
    raise OSError(f"{name}: cannot open shared object file: No such file or directory")


def test_no_numa_information_is_an_error_record_not_a_crash(probe, tmp_path):
    topo = probe(hgx(), tmp_path)
    assert "error" in topo["host_numa_cpus"]
    assert "error" in topo["gpus"][0]["numa_node"]


@pytest.mark.parametrize(
    ("text", "cpus"),
    [("0-3,8,10-11", [0, 1, 2, 3, 8, 10, 11]), ("5", [5]), ("", [])],
)
def test_cpulists_round_trip(text, cpus):
    assert parse_cpulist(text) == cpus
    assert format_cpulist(cpus) == text


def test_nodes_of_cpus():
    assert nodes_of_cpus([1, 40], {"0": "0-31", "1": "32-63"}) == [0, 1]
    assert nodes_of_cpus([], {"0": "0-31"}) == []
