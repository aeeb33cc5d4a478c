"""suites/facts/test_rdma_counters.py and test_nccl_ib.py decided by calling them on a small
hand-built fabric (2 GPUs, 2 InfiniBand NICs on their switches), each setting and counter at
and one past its limit, with the messages."""

from __future__ import annotations

import copy
import importlib
from types import SimpleNamespace

from check_calls import call

from rigcheck.facts import Facts
from rigcheck.plugin.fabric import FABRIC_KEY

counters = importlib.import_module("suites.facts.test_rdma_counters")
nccl = importlib.import_module("suites.facts.test_nccl_ib")

EXPECTED = {"nics_per_gpu": 1, "rate_gbps": 400, "link_layer": "InfiniBand",
            "driver": "mlx5_core", "placement": "pcie_switch", "gpudirect_rdma": True,
            "source": "the site's node spec"}  # fmt: skip
ZERO = {"symbol_error": 0, "link_downed": 0, "port_rcv_errors": 0}
SWITCH = (["0000:00:01.0", "0000:80:00.0"], ["0000:00:02.0", "0000:84:00.0"])


def nic(i: int, layer: str = "InfiniBand") -> dict:
    port = {"port": 1, "state": "ACTIVE", "phys_state": "LinkUp", "rate_gbps": 400.0,
            "link_layer": layer, "counters": {"counters": dict(ZERO), "hw_counters": None},
            "gids": [{"index": 3, "gid": "g", "type": "RoCE v2", "netdev": f"ens{i}"}]}  # fmt: skip
    pci = {"bus_id": f"0000:c{i}:00.0", "numa_node": i, "bridges": [*SWITCH[i], "0000:81:01.0"]}
    return {"name": f"mlx5_{i}", "driver": "mlx5_core", "pci": pci, "ports": [port]}


def node(settings=None, layer="InfiniBand") -> Facts:
    places = [{"bus_id": f"0000:1{i}:00.0", "numa_node": i,
               "bridges": [*SWITCH[i], "0000:81:00.0"]} for i in (0, 1)]  # fmt: skip
    gpus = [{"index": i, "pci": place} for i, place in enumerate(places)]
    names = ("NCCL_IB_DISABLE", "NCCL_IB_HCA", "NCCL_SOCKET_IFNAME", "NCCL_NET_GDR_LEVEL",
             "NCCL_IB_GID_INDEX", "NCCL_IB_ROCE_VERSION_NUM", "NCCL_IB_TC", "NCCL_TOPO_FILE",
             "NCCL_NET")  # fmt: skip
    up = {"operstate": "up"}
    interfaces = {"eth0": {"mtu": 1500, **up}, "ens0": {"mtu": 9000, **up},
                  "ens1": {"mtu": 9000, **up}}  # fmt: skip
    return Facts({"origin": {"kind": "synthetic"}, "fabric": {
        "applicable": True, "rdma_devices": [nic(0, layer), nic(1, layer)], "gpus": gpus,
        "gpudirect_rdma": {"nvidia_peermem": True, "dma_buf": False},
        "nccl_ib": {"settings": {**dict.fromkeys(names), **(settings or {})},
                    "interfaces": interfaces}}})  # fmt: skip


def decide(check, *args) -> tuple[str, str]:
    """(outcome, message) of one check call, as pytest would report it."""
    return call(check, *args)[:2]


def request(fabric=None):
    return SimpleNamespace(config=SimpleNamespace(stash={FABRIC_KEY: fabric}))


def port_counters(facts, i):
    return facts.data["fabric"]["rdma_devices"][i]["ports"][0]["counters"]["counters"]


def test_counters_at_and_past_gcms_limits():
    facts = node()
    assert call(counters.test_rdma_port_error_counters, request(), facts) == ("passed", "", [])
    port_counters(facts, 1)["symbol_error"] = 1
    assert call(counters.test_rdma_port_error_counters, request(), facts) == (
        "passed", "", ["UserWarning"])  # fmt: skip
    port_counters(facts, 1)["symbol_error"] = 100
    assert decide(counters.test_rdma_port_error_counters, request(), facts) == ("passed", "")
    port_counters(facts, 1)["port_rcv_errors"] = 1
    outcome, message = decide(counters.test_rdma_port_error_counters, request(), facts)
    assert outcome == "failed" and message.startswith(
        "RDMA port error counters: mlx5_1 port 1: 101 errors (port_rcv_errors 1, symbol_error "
        "100) (gcm check_ib_counters limits (facebookresearch/gcm PR #119): warn above 0, fail "
        "above 100). Symbol errors"
    )


def test_counters_unreadable_missing_or_not_applicable():
    facts = node()
    port_counters(facts, 0)["link_downed"] = {"error": "N/A (no PMA)"}
    assert decide(counters.test_rdma_port_error_counters, request(), facts)[1].startswith(
        "RDMA port error counters: mlx5_0 port 1: link_downed unreadable (N/A (no PMA))"
    )
    facts = node()
    del facts.data["fabric"]["rdma_devices"][0]["ports"][0]["counters"]
    assert "mlx5_0 port 1: counters unreadable: not in the snapshot" in decide(
        counters.test_rdma_port_error_counters, request(), facts)[1]  # fmt: skip
    facts.data["fabric"]["rdma_devices"][1]["ports"] = {"error": "EIO"}
    assert "mlx5_1 port ?: counters unreadable: EIO" in decide(
        counters.test_rdma_port_error_counters, request(), facts)[1]  # fmt: skip
    facts.data["fabric"] = {"applicable": False, "reason": "no /sys/class/infiniband"}
    assert decide(counters.test_rdma_port_error_counters, request(), facts) == (
        "skipped", "no RDMA port to judge: no /sys/class/infiniband")  # fmt: skip
    del facts.data["fabric"]
    assert decide(counters.test_rdma_port_error_counters, request(), facts)[0] == "skipped"
    assert decide(counters.test_rdma_port_error_counters, request(EXPECTED), facts)[0] == "failed"


def test_nccl_may_use_the_ports():
    check = nccl.test_nccl_may_use_the_rdma_ports
    assert decide(check, node(), EXPECTED, 2) == ("passed", "")
    assert decide(check, node({"NCCL_IB_HCA": "=mlx5_0,mlx5_1"}), EXPECTED, 2) == ("passed", "")
    outcome, message = decide(check, node({"NCCL_IB_HCA": "=mlx5_0"}), EXPECTED, 2)
    assert outcome == "failed" and message.startswith(
        "NCCL will not use the RDMA fabric as expected: NCCL_IB_HCA==mlx5_0 lets NCCL use 1 of "
        "the 2 expected ports (mlx5_0:1; found mlx5_0:1, mlx5_1:1). These come from"
    )
    assert "NCCL_IB_DISABLE=1: NCCL sends" in decide(check, node({"NCCL_IB_DISABLE": "1"}),
                                                      EXPECTED, 2)[1]  # fmt: skip
    assert decide(check, node({"NCCL_IB_DISABLE": "0"}), EXPECTED, 2)[0] == "passed"
    assert "NCCL_NET=Socket" in decide(check, node({"NCCL_NET": "Socket"}), EXPECTED, 2)[1]
    assert decide(check, node({"NCCL_NET": "IB"}), EXPECTED, 2)[0] == "passed"
    facts = node()
    facts.data["fabric"]["nccl_ib"]["settings"] = {"error": "EACCES"}
    assert decide(check, facts, EXPECTED, 2) == (
        "failed", "cannot check: NCCL's settings could not be read: EACCES")  # fmt: skip


def test_socket_interface():
    check = nccl.test_nccl_socket_interface_on_this_node
    assert decide(check, node(), EXPECTED)[0] == "skipped"
    assert decide(check, node({"NCCL_SOCKET_IFNAME": "eth"}), EXPECTED) == ("passed", "")
    assert decide(check, node({"NCCL_SOCKET_IFNAME": "=ib0"}), EXPECTED) == (
        "failed", "NCCL_SOCKET_IFNAME==ib0 matches none of ens0, ens1, eth0: NCCL cannot "
        "bootstrap across nodes. Set it to an interface `ip -br link` shows UP.")  # fmt: skip


def test_gpudirect_distance():
    check = nccl.test_gpus_within_nccls_gpudirect_distance
    assert decide(check, node(), EXPECTED) == ("passed", "")
    assert decide(check, node(), dict(EXPECTED, gpudirect_rdma=False))[0] == "skipped"
    assert decide(check, node({"NCCL_TOPO_FILE": "/opt/topo.xml"}), EXPECTED)[0] == "skipped"
    assert decide(check, node({"NCCL_NET_GDR_LEVEL": "PIX"}), EXPECTED) == ("passed", "")
    outcome, message = decide(check, node({"NCCL_NET_GDR_LEVEL": "LOC"}), EXPECTED)
    assert outcome == "failed" and message.startswith(
        "NCCL will not use GPUDirect RDMA for: GPU 0: nearest NIC mlx5_0 is PIX away; GPU 1: "
        "nearest NIC mlx5_1 is PIX away (it does up to LOC, NCCL_NET_GDR_LEVEL)."
    )
    facts = node()
    facts.data["fabric"]["rdma_devices"][1]["pci"]["bridges"] = ["0000:00:30.0"]
    assert "GPU 1: nearest NIC mlx5_1 is PHB away (it does up to PXB, NCCL's default)" in (
        decide(check, facts, EXPECTED)[1])  # fmt: skip
    assert decide(check, node({"NCCL_NET_GDR_LEVEL": "7"}), EXPECTED)[0] == "failed"


def test_roce_settings():
    check = nccl.test_roce_ports_ready_for_nccl
    roce = dict(EXPECTED, link_layer="Ethernet")
    assert decide(check, node(), EXPECTED)[0] == "skipped"
    assert decide(check, node(layer="Ethernet"), roce) == ("passed", "")
    facts = node(layer="Ethernet")
    facts.data["fabric"]["nccl_ib"]["interfaces"]["ens1"]["mtu"] = 4199
    assert decide(check, facts, roce)[1].startswith(
        "RoCE not ready for NCCL: mlx5_1:1: ens1 MTU 4199, below 4200. A RoCE v2 GID"
    )
    assert decide(check, facts, dict(roce, roce={"min_mtu": 4000}))[0] == "passed"
    tc = dict(roce, roce={"traffic_class": 106})
    assert "NCCL_IB_TC=unset, the site's traffic class is 106" in decide(
        check, node(layer="Ethernet"), tc)[1]  # fmt: skip
    assert decide(check, node({"NCCL_IB_TC": "106"}, layer="Ethernet"), tc) == ("passed", "")
    facts = node(layer="Ethernet")
    facts.data["fabric"]["rdma_devices"][0]["ports"][0]["gids"] = {"error": "EIO"}
    assert decide(check, copy.deepcopy(facts), roce) == (
        "failed", "cannot check: mlx5_0:1 GIDs could not be read: EIO")  # fmt: skip


def test_nccl_net_other_than_socket_passes():
    check = nccl.test_nccl_may_use_the_rdma_ports
    for value in (None, "", "IB", "sockets"):
        assert decide(check, node({"NCCL_NET": value}), EXPECTED, 2) == ("passed", ""), value
    assert decide(check, node({"NCCL_NET": "SOCKET"}), EXPECTED, 2)[0] == "failed"


def test_the_counter_warning_points_at_the_suite_check():
    import warnings

    facts = node()
    port_counters(facts, 1)["symbol_error"] = 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        counters.test_rdma_port_error_counters(request(), facts)
    assert [w.filename.endswith("test_rdma_counters.py") for w in caught] == [True]
