"""The topology probe against a fake pynvml and a fake /sys: pairs, NVLink counts, P2P, NUMA."""

import sys
import types
from collections import namedtuple

import pytest

from rigcheck.facts import topology
from rigcheck.facts.topology import format_cpulist, nodes_of_cpus, parse_cpulist

Pci = namedtuple("Pci", "busId")
BUS = [f"0000:{b:02x}:00.0" for b in (0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB)]
SWITCH_BUS = "0000:05:00.0"
SOCKET_CPUS = ([*range(0, 32), *range(64, 96)], [*range(32, 64), *range(96, 128)])


class NVMLError(Exception):
    pass


class NotSupported(NVMLError):
    pass


def fake_pynvml(gpus=8, links=18, down=(), switch=True, p2p=0, **overrides):
    """An HGX-like node: GPUs 0-3 on socket 0, 4-7 on socket 1, all NVLinks into NVSwitches."""

    def index(h):
        return int(h[1:])

    def link_state(h, link):
        if link >= links:
            raise NVMLError("Invalid Argument")
        return 0 if (index(h), link) in down else 1

    def ancestor(a, b):
        return 40 if index(a) // 4 == index(b) // 4 else 50

    def affinity(h, words):
        mask = sum(1 << cpu for cpu in SOCKET_CPUS[index(h) // 4])
        return [(mask >> (64 * w)) & (2**64 - 1) for w in range(max(words, 2))]

    def remote_pci(h, link):
        return Pci(SWITCH_BUS.encode() if switch else BUS[index(h) ^ 1].encode())

    calls = {
        "nvmlInit": lambda: None,
        "nvmlShutdown": lambda: None,
        "nvmlDeviceGetCount": lambda: gpus,
        "nvmlDeviceGetHandleByIndex": lambda i: f"h{i}",
        "nvmlDeviceGetPciInfo": lambda h: Pci(b"0000" + BUS[index(h)].encode()),
        "nvmlDeviceGetCpuAffinity": affinity,
        "nvmlDeviceGetNvLinkState": link_state,
        "nvmlDeviceGetNvLinkRemoteDeviceType": lambda h, link: 2 if switch else 0,
        "nvmlDeviceGetNvLinkRemotePciInfo": remote_pci,
        "nvmlDeviceGetTopologyCommonAncestor": ancestor,
        "nvmlDeviceGetP2PStatus": lambda a, b, cap: p2p,
    }
    calls.update(overrides)
    module = types.SimpleNamespace(**calls)
    module.NVMLError, module.NVMLError_NotSupported = NVMLError, NotSupported
    module.NVML_NVLINK_MAX_LINKS, module.NVML_FEATURE_ENABLED = 18, 1
    return module


@pytest.fixture
def sysfs(tmp_path):
    """Two NUMA nodes of 64 CPUs each; GPU i's PCI device on node i // 4."""
    for node, cpus in enumerate(("0-31,64-95", "32-63,96-127")):
        (tmp_path / f"devices/system/node/node{node}").mkdir(parents=True)
        (tmp_path / f"devices/system/node/node{node}/cpulist").write_text(cpus + "\n")
    for i, bus in enumerate(BUS):
        (tmp_path / f"bus/pci/devices/{bus}").mkdir(parents=True)
        (tmp_path / f"bus/pci/devices/{bus}/numa_node").write_text(f"{i // 4}\n")
    return tmp_path


@pytest.fixture
def use_fake(monkeypatch):
    def install(**kwargs):
        monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(**kwargs))

    return install


def test_an_nvswitch_node_reads_as_nv18_pairs_with_pcie_paths(use_fake, sysfs):
    use_fake()
    topo = topology.probe_topology(sysfs)
    assert len(topo["gpus"]) == 8 and len(topo["pairs"]) == 28
    first = topo["pairs"][0]
    assert first["gpus"] == [0, 1]
    assert first["nvlink"] == {"links": 18, "via": "nvswitch"}
    assert first["pcie_path"] == "NODE"
    assert first["p2p"] == {"read": "ok", "write": "ok", "nvlink": "ok", "atomics": "ok"}
    across = next(p for p in topo["pairs"] if p["gpus"] == [0, 4])
    assert across["pcie_path"] == "SYS"


def test_gpu_numa_node_and_cpu_affinity(use_fake, sysfs):
    use_fake()
    gpus = topology.probe_topology(sysfs)["gpus"]
    assert gpus[0]["bus_id"] == "0000:18:00.0"
    assert gpus[0]["numa_node"] == 0 and gpus[0]["cpu_numa_nodes"] == [0]
    assert gpus[0]["cpu_affinity"] == "0-31,64-95"
    assert gpus[5]["numa_node"] == 1 and gpus[5]["cpu_affinity"] == "32-63,96-127"


def test_a_link_down_narrows_every_pair_of_that_gpu(use_fake, sysfs):
    use_fake(down={(3, 7)})
    topo = topology.probe_topology(sysfs)
    pairs = {tuple(p["gpus"]): p["nvlink"]["links"] for p in topo["pairs"]}
    assert pairs[(0, 3)] == pairs[(3, 5)] == 17
    assert pairs[(0, 1)] == 18


def test_direct_links_count_per_peer(use_fake, sysfs):
    use_fake(gpus=2, links=4, switch=False)
    (pair,) = topology.probe_topology(sysfs)["pairs"]
    assert pair["nvlink"] == {"links": 4, "via": "direct"}


def test_a_pcie_only_node_has_no_nvlink_and_p2p_statuses_are_named(use_fake, sysfs):
    use_fake(links=0, p2p=1)
    pair = topology.probe_topology(sysfs)["pairs"][0]
    assert pair["nvlink"] == {"links": 0, "via": None}
    assert pair["p2p"]["read"] == "chipset_not_supported"


def test_failing_reads_become_error_records(use_fake, sysfs):
    def lost(*_args):
        raise NVMLError("GPU is lost")

    use_fake(nvmlDeviceGetTopologyCommonAncestor=lost, nvmlDeviceGetCpuAffinity=lost)
    topo = topology.probe_topology(sysfs)
    assert topo["pairs"][0]["pcie_path"] == {"error": "NVMLError: GPU is lost"}
    assert topo["gpus"][0]["cpu_affinity"] == {"error": "NVMLError: GPU is lost"}
    assert "error" in topo["gpus"][0]["cpu_numa_nodes"]
    assert topo["pairs"][0]["nvlink"]["links"] == 18  # the rest is still read


def test_no_driver_is_an_error_record(use_fake, sysfs):
    def missing():
        raise NVMLError("NVML Shared Library Not Found")

    use_fake(nvmlInit=missing)
    assert "NVML Shared Library Not Found" in topology.probe_topology(sysfs)["error"]


def test_no_numa_information_is_an_error_record_not_a_crash(use_fake, tmp_path):
    use_fake()
    topo = topology.probe_topology(tmp_path)
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
