"""The RDMA fabric checks of suites/facts/test_fabric.py decided by calling them on a small
hand-built fabric (2 GPUs, 2 InfiniBand NICs on their switches, 1 Ethernet NIC): each count,
rate and placement at and one below what the node spec wants, each port state and GPUDirect
path member by member, an unreadable value, with the messages.
"""

from __future__ import annotations

import copy
import importlib

import pytest
from check_calls import call

from rigcheck.facts import Facts

fabric = importlib.import_module("suites.facts.test_fabric")

EXPECTED = {
    "nics_per_gpu": 1,
    "rate_gbps": 400,
    "link_layer": "InfiniBand",
    "driver": "mlx5_core",
    "placement": "pcie_switch",
    "gpudirect_rdma": True,
    "source": "the site's node spec",
}


def nic(name, bus, numa, bridges, layer="InfiniBand", rate=400.0, driver="mlx5_core"):
    port = {"port": 1, "state": "ACTIVE", "phys_state": "LinkUp", "rate": f"{rate:g} Gb/sec",
            "rate_gbps": rate, "link_layer": layer}  # fmt: skip
    pci = {"bus_id": bus, "numa_node": numa, "bridges": bridges}
    return {"name": name, "driver": driver, "efa": False, "pci": pci, "ports": [port]}


def node() -> Facts:
    """GPU 0 and mlx5_0 share a switch on NUMA 0, GPU 1 and mlx5_1 on NUMA 1; mlx5_2 is the
    Ethernet NIC of the host network."""
    switch0, switch1 = ["0000:00:01.0", "0000:80:00.0"], ["0000:00:02.0", "0000:84:00.0"]
    return Facts({
        "origin": {"kind": "synthetic"},
        "fabric": {
            "applicable": True,
            "rdma_devices": [
                nic("mlx5_0", "0000:c0:00.0", 0, [*switch0, "0000:81:01.0"]),
                nic("mlx5_1", "0000:c1:00.0", 1, [*switch1, "0000:85:01.0"]),
                nic("mlx5_2", "0000:e0:00.0", 0, ["0000:00:1f.0"], "Ethernet", 100.0),
            ],
            "gpus": [
                {"index": 0, "pci": {"bus_id": "0000:18:00.0", "numa_node": 0,
                                     "bridges": [*switch0, "0000:81:00.0"]}},
                {"index": 1, "pci": {"bus_id": "0000:2a:00.0", "numa_node": 1,
                                     "bridges": [*switch1, "0000:85:00.0"]}},
            ],
            "gpudirect_rdma": {"nvidia_peermem": True, "nv_peer_mem": False, "dma_buf": False,
                               "nvidia_open_kernel_module": False, "kernel": "5.15.0"},
        },
    })  # fmt: skip


def decide(check, *args) -> tuple[str, str]:
    """(outcome, message) of one check call, as pytest would report it."""
    return call(check, *args)[:2]


def test_the_healthy_node_passes_every_check():
    facts = node()
    for check in ("test_rdma_ports_up", "test_rdma_port_rate", "test_rdma_nic_placement",
                  "test_gpudirect_rdma"):  # fmt: skip
        assert decide(getattr(fabric, check), facts, EXPECTED) == ("passed", ""), check
    assert decide(fabric.test_rdma_nic_count, facts, EXPECTED, 2) == ("passed", "")


def test_nic_count_at_and_one_below():
    facts = node()
    outcome, message = decide(fabric.test_rdma_nic_count, facts, EXPECTED, 3)
    assert (outcome, message) == (
        "failed",
        "2 RDMA NICs of 3 expected (1 x 400 Gb/s InfiniBand per GPU, 3 GPUs; source: the site's "
        "node spec). Found: mlx5_0, mlx5_1. A missing NIC: check `lspci | grep -i mellanox` and "
        "the driver (mlx5_ib, efa).",
    )
    half = dict(EXPECTED, nics_per_gpu=1.5)
    assert decide(fabric.test_rdma_nic_count, facts, half, 2)[1].startswith(
        "2 RDMA NICs of 3 expected (1.5 x 400 Gb/s InfiniBand per GPU, 2 GPUs;"
    )


def test_which_nics_count():
    facts = node()
    devices = facts.data["fabric"]["rdma_devices"]
    names = lambda expected: [n["name"] for n in fabric.counted(facts.data["fabric"], expected)]  # noqa: E731
    assert names(EXPECTED) == ["mlx5_0", "mlx5_1"]
    assert names(dict(EXPECTED, link_layer=None)) == ["mlx5_0", "mlx5_1", "mlx5_2"]
    assert names(dict(EXPECTED, link_layer="Ethernet")) == ["mlx5_2"]
    devices[1]["driver"] = "efa"
    assert names(EXPECTED) == ["mlx5_0"]
    assert names(dict(EXPECTED, driver=None)) == ["mlx5_0", "mlx5_1"]
    devices[1]["driver"] = {"error": "EACCES"}
    assert decide(fabric.counted, facts.data["fabric"], EXPECTED) == (
        "failed",
        "cannot check: mlx5_1 driver could not be read: EACCES",
    )
    devices[1]["driver"] = "mlx5_core"
    devices[1]["ports"][0]["link_layer"] = {"error": "EIO"}
    assert decide(fabric.counted, facts.data["fabric"], EXPECTED) == (
        "failed",
        "cannot check: mlx5_1 port 1 could not be read: EIO",
    )
    devices[1]["ports"] = {"error": "ENOENT"}
    assert decide(fabric.counted, facts.data["fabric"], EXPECTED)[1] == (
        "cannot check: mlx5_1 ports could not be read: ENOENT"
    )


def test_no_fabric_where_one_is_expected():
    facts = node()
    facts.data["fabric"] = {"applicable": False, "reason": "no /sys/class/infiniband"}
    assert decide(fabric.test_rdma_ports_up, facts, EXPECTED) == (
        "failed",
        "no RDMA fabric on this node (no /sys/class/infiniband), but one is expected: the "
        "site's node spec. Load the NIC driver (mlx5_ib, efa) and check "
        "`ls /sys/class/infiniband`.",
    )


@pytest.mark.parametrize(
    ("state", "phys", "outcome"),
    [("ACTIVE", "LinkUp", "passed"), ("INIT", "LinkUp", "failed"), ("ARMED", "LinkUp", "failed"),
     ("ACTIVE", "Polling", "failed"), ("DOWN", "Disabled", "failed")],
)  # fmt: skip
def test_port_states_member_by_member(state, phys, outcome):
    facts = node()
    facts.data["fabric"]["rdma_devices"][1]["ports"][0].update(state=state, phys_state=phys)
    facts.data["fabric"]["rdma_devices"][2]["ports"][0].update(state="DOWN")  # Ethernet: not ours
    got, message = decide(fabric.test_rdma_ports_up, facts, EXPECTED)
    assert got == outcome, message
    if outcome == "failed":
        assert message.startswith(
            f"RDMA ports not up: mlx5_1 port 1: state {state}, phys_state {phys}. Polling/Disabled"
        ), message


def test_port_rate_at_and_below_and_an_unreadable_rate():
    facts = node()
    port = facts.data["fabric"]["rdma_devices"][1]["ports"][0]
    port.update(rate_gbps=399.0, rate="399 Gb/sec (odd)")
    assert decide(fabric.test_rdma_port_rate, facts, EXPECTED) == (
        "failed",
        "RDMA ports below 400 Gb/s: mlx5_1 port 1: 399 Gb/sec (odd) (source: the site's node "
        "spec). A port that trained to a lower speed: reseat or replace the cable or transceiver.",
    )
    port.update(rate=None)
    assert decide(fabric.test_rdma_port_rate, facts, EXPECTED)[1].startswith(
        "RDMA ports below 400 Gb/s: mlx5_1 port 1: 399.0 (source"
    )
    port.update(rate_gbps={"error": "EIO"})
    assert decide(fabric.test_rdma_port_rate, facts, EXPECTED) == (
        "failed",
        "cannot check: mlx5_1 port 1 rate could not be read: EIO",
    )


def test_placement_by_pcie_switch_both_ways():
    facts = node()
    nics = facts.data["fabric"]["rdma_devices"]
    nics[1]["pci"]["bridges"] = ["0000:00:03.0", "0000:90:00.0", "0000:91:00.0"]
    assert decide(fabric.test_rdma_nic_placement, facts, EXPECTED) == (
        "failed",
        "RDMA NICs placed away from the GPUs: mlx5_1 (0000:c1:00.0, NUMA 1) shares no PCIe "
        "switch with a GPU; GPU 1 (0000:2a:00.0) has no NIC on its PCIe switch. Traffic then "
        "crosses the CPU interconnect: check which slot each NIC is in (`nvidia-smi topo -m`).",
    )
    nics[1]["pci"] = {"error": "EACCES"}
    assert decide(fabric.test_rdma_nic_placement, facts, EXPECTED) == (
        "failed",
        "cannot check: mlx5_1 PCI place could not be read: EACCES",
    )
    facts = node()
    facts.data["fabric"]["gpus"][0]["pci"] = {"error": "EACCES"}
    assert decide(fabric.test_rdma_nic_placement, facts, EXPECTED)[1] == (
        "cannot check: GPU 0 PCI place could not be read: EACCES"
    )
    assert decide(fabric.test_rdma_nic_placement, node(), dict(EXPECTED, placement=None)) == (
        "skipped",
        "the fabric spec does not judge NIC placement (placement: null)",
    )


def test_placement_by_numa_node():
    by_numa = dict(EXPECTED, placement="numa_node")
    facts = node()
    for n in facts.data["fabric"]["rdma_devices"]:
        n["pci"]["bridges"] = []  # a VM: no switches, NUMA nodes kept
    assert decide(fabric.test_rdma_nic_placement, facts, by_numa) == ("passed", "")
    facts.data["fabric"]["rdma_devices"][1]["pci"]["numa_node"] = 2
    assert decide(fabric.test_rdma_nic_placement, facts, by_numa)[1].startswith(
        "RDMA NICs placed away from the GPUs: mlx5_1 (0000:c1:00.0) is on NUMA node 2, which has "
        "no GPU; NUMA node 1: 1 GPUs (1) but 0 NICs (none). Traffic"
    )


def test_nics_per_numa_node_at_and_below_the_share():
    gpus = [(0, {"numa_node": 0}), (1, {"numa_node": 0}), (2, {"numa_node": 1})]
    places = [("a", {"numa_node": 0, "bus_id": "A"}), ("b", {"numa_node": 0, "bus_id": "B"}),
              ("c", {"numa_node": 1, "bus_id": "C"})]  # fmt: skip
    assert fabric.short_per_numa_node(places, gpus, 1) == []
    assert fabric.short_per_numa_node(places[1:], gpus, 1) == [
        "NUMA node 0: 2 GPUs (0, 1) but 1 NICs (b)"
    ]
    assert fabric.short_per_numa_node(places, gpus, 2) == [
        "NUMA node 0: 2 GPUs (0, 1) but 2 NICs (a, b)",
        "NUMA node 1: 1 GPUs (2) but 1 NICs (c)",
    ]
    assert fabric.short_per_numa_node(places, gpus, 0.5) == []


@pytest.mark.parametrize("path", ["nvidia_peermem", "nv_peer_mem", "dma_buf"])
def test_gpudirect_each_path_member_by_member(path):
    facts = node()
    gdr = facts.data["fabric"]["gpudirect_rdma"]
    gdr.update(nvidia_peermem=False, nv_peer_mem=False, dma_buf=False)
    assert decide(fabric.test_gpudirect_rdma, facts, EXPECTED) == (
        "failed",
        "no GPUDirect RDMA: nvidia_peermem is not loaded and dma-buf is not possible (open kernel "
        "module: False, kernel 5.15.0; dma-buf needs both the open module and Linux >= 5.12). "
        "`modprobe nvidia_peermem`, or install the open kernel module.",
    )
    gdr[path] = True
    assert decide(fabric.test_gpudirect_rdma, facts, EXPECTED) == ("passed", "")


def test_gpudirect_not_expected_or_unreadable():
    facts = node()
    assert decide(fabric.test_gpudirect_rdma, facts, dict(EXPECTED, gpudirect_rdma=False)) == (
        "skipped",
        "the fabric spec does not expect GPUDirect RDMA",
    )
    facts.data["fabric"]["gpudirect_rdma"] = {"error": "no module info"}
    assert decide(fabric.test_gpudirect_rdma, facts, EXPECTED) == (
        "failed",
        "cannot check: GPUDirect RDMA readiness could not be read: no module info",
    )


def test_describe_and_port_labels():
    assert fabric.describe(EXPECTED) == "1 x 400 Gb/s InfiniBand per GPU"
    assert fabric.describe(dict(EXPECTED, link_layer=None, rate_gbps=200.5)) == (
        "1 x 200.5 Gb/s RDMA per GPU"
    )
    assert fabric.port_label("mlx5_3", {"port": 2}) == "mlx5_3 port 2"
    nics = copy.deepcopy(node().data["fabric"]["rdma_devices"])
    assert [label for label, _ in fabric.ports_of(nics, EXPECTED)] == [
        "mlx5_0 port 1",
        "mlx5_1 port 1",
    ]
    assert len(fabric.ports_of(nics, dict(EXPECTED, link_layer=None))) == 3


def test_no_nic_found_and_two_ports_down_are_named():
    facts = node()
    for n in facts.data["fabric"]["rdma_devices"]:
        n["driver"] = "efa"
    assert decide(fabric.test_rdma_nic_count, facts, EXPECTED, 1)[1].startswith(
        "0 RDMA NICs of 1 expected (1 x 400 Gb/s InfiniBand per GPU, 1 GPUs; source: the site's "
        "node spec). Found: none. A missing NIC"
    )
    facts = node()
    for n in facts.data["fabric"]["rdma_devices"][:2]:
        n["ports"][0].update(state="DOWN", phys_state="Polling")
    assert decide(fabric.test_rdma_ports_up, facts, EXPECTED) == (
        "failed",
        "RDMA ports not up: mlx5_0 port 1: state DOWN, phys_state Polling; mlx5_1 port 1: state "
        "DOWN, phys_state Polling. Polling/Disabled: check the cable and the switch port; "
        "INIT/ARMED with LinkUp: no subnet manager has configured the port (opensm).",
    )
