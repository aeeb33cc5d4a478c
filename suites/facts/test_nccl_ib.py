"""NCCL over the RDMA fabric, before any job: NCCL is allowed to use the expected ports
(NCCL_IB_DISABLE, NCCL_NET, NCCL_IB_HCA), its socket interface exists, each GPU is near enough a
NIC for GPUDirect RDMA at NCCL's NCCL_NET_GDR_LEVEL, and RoCE ports have a RoCE v2 GID, a large
enough MTU and the site's traffic class. Rules: rigcheck/rdma/nccl_ib.py.

GPUDirect RDMA's driver side (nvidia_peermem, dma-buf) is suites/facts/test_fabric.py's
test_gpudirect_rdma; ACS on the switch ports above the GPUs and NICs is
suites/facts/test_host_limits.py's test_acs_not_redirecting_p2p.
"""

import pytest

from rigcheck.facts.probe import is_error
from rigcheck.rdma import nccl_ib
from rigcheck.require import require

pytestmark = pytest.mark.facts


def readable(value, what: str):
    if is_error(value):
        pytest.fail(f"cannot check: {what} could not be read: {value['error']}", pytrace=False)
    return value


def fabric_with_nccl(facts) -> dict:
    fabric = require(facts, "fabric")
    if not fabric["applicable"]:
        pytest.fail(f"no RDMA fabric on this node ({fabric['reason']}), but one is expected")
    if "nccl_ib" not in fabric:
        pytest.fail("cannot check: the snapshot has no NCCL settings (recorded by an older "
                    "rigcheck?): record it again with `rigcheck facts`", pytrace=False)  # fmt: skip
    return fabric


def expected_ports(fabric, expected) -> list[tuple[str, dict, dict]]:
    """(label, device, port) of the ports that count: the expected driver and link layer."""
    out = []
    for device in fabric["rdma_devices"]:
        driver = expected.get("driver")
        if driver and readable(device["driver"], f"{device['name']} driver") != driver:
            continue
        for port in readable(device["ports"], f"{device['name']} ports"):
            layer = readable(port["link_layer"], f"{device['name']} port {port['port']} layer")
            if expected.get("link_layer") in (None, layer):
                out.append((f"{device['name']}:{port['port']}", device, port))
    return out


def settings_of(fabric) -> dict:
    return readable(fabric["nccl_ib"]["settings"], "NCCL's settings")


def test_nccl_may_use_the_rdma_ports(facts, fabric_expected, expected_gpus):
    fabric = fabric_with_nccl(facts)
    settings = settings_of(fabric)
    ports = [(d["name"], p["port"]) for _, d, p in expected_ports(fabric, fabric_expected)]
    wanted = fabric_expected["nics_per_gpu"] * expected_gpus
    problems = []
    if settings.get("NCCL_IB_DISABLE") == "1":
        problems.append("NCCL_IB_DISABLE=1: NCCL sends everything over TCP sockets")
    if str(settings.get("NCCL_NET")).lower() == "socket":
        problems.append("NCCL_NET=Socket: NCCL sends everything over TCP sockets")
    if settings.get("NCCL_IB_HCA"):
        problems += nccl_ib.hca_problems(settings["NCCL_IB_HCA"], ports, wanted)
    assert not problems, (
        f"NCCL will not use the RDMA fabric as expected: {'; '.join(problems)}. These come from "
        "the environment or an nccl.conf (~/.nccl.conf, /etc/nccl.conf): unset them, or list "
        "every port (`ibv_devinfo -l`)."
    )


def test_nccl_socket_interface_on_this_node(facts, fabric_expected):
    fabric = fabric_with_nccl(facts)
    value = settings_of(fabric).get("NCCL_SOCKET_IFNAME")
    if not value:
        pytest.skip("NCCL_SOCKET_IFNAME not set: NCCL picks the interface itself")
    interfaces = readable(fabric["nccl_ib"]["interfaces"], "the network interfaces")
    problems = nccl_ib.socket_problems(value, interfaces)
    assert not problems, (
        f"{'; '.join(problems)}: NCCL cannot bootstrap across nodes. Set it to an interface "
        "`ip -br link` shows UP."
    )


def test_gpus_within_nccls_gpudirect_distance(facts, fabric_expected):
    if not fabric_expected.get("gpudirect_rdma"):
        pytest.skip("the fabric spec does not expect GPUDirect RDMA")
    fabric = fabric_with_nccl(facts)
    settings = settings_of(fabric)
    if settings.get("NCCL_TOPO_FILE"):
        pytest.skip(f"NCCL_TOPO_FILE={settings['NCCL_TOPO_FILE']}: NCCL's topology is that file")
    try:
        level = nccl_ib.gdr_level(settings.get("NCCL_NET_GDR_LEVEL"))
    except ValueError as exc:
        pytest.fail(str(exc), pytrace=False)
    nics = {d["name"]: d for _, d, _ in expected_ports(fabric, fabric_expected)}
    places = [(n, readable(d["pci"], f"{n} PCI place")) for n, d in sorted(nics.items())]
    gpus = [(g["index"], readable(g["pci"], f"GPU {g['index']} PCI place")) for g in fabric["gpus"]]
    problems = nccl_ib.gdr_problems(level, gpus, places)
    source = "NCCL_NET_GDR_LEVEL" if settings.get("NCCL_NET_GDR_LEVEL") else "NCCL's default"
    assert not problems, (
        f"NCCL will not use GPUDirect RDMA for: {'; '.join(problems)} (it does up to {level}, "
        f"{source}). Traffic then stages through host memory: move the NIC beside the GPU, or "
        "on a VM whose PCIe tree hides the switches give NCCL the provider's NCCL_TOPO_FILE."
    )


def test_roce_ports_ready_for_nccl(facts, fabric_expected):
    fabric = fabric_with_nccl(facts)
    roce = [
        (label, port)
        for label, _, port in expected_ports(fabric, fabric_expected)
        if port["link_layer"] == "Ethernet"
    ]
    if not roce:
        pytest.skip("no RoCE port among the expected ones (InfiniBand needs no GID or MTU setup)")
    settings = settings_of(fabric)
    interfaces = readable(fabric["nccl_ib"]["interfaces"], "the network interfaces")
    spec = fabric_expected.get("roce") or {}
    problems = nccl_ib.tc_problems(settings, spec)
    for label, port in roce:
        readable(port.get("gids", {"error": "not in the snapshot"}), f"{label} GIDs")
        problems += nccl_ib.roce_problems(label, port, settings, interfaces, spec)
    assert not problems, (
        f"RoCE not ready for NCCL: {'; '.join(problems)}. A RoCE v2 GID needs an IP address on "
        "the port's net device (`show_gids`); raise the MTU (`ip link set DEV mtu 9000`, and on "
        "the switch); NCCL_IB_TC must be the class the switches keep lossless."
    )
