"""The node's RDMA fabric: NIC count, port state and rate, placement next to the GPUs, and
GPUDirect RDMA, against the fabric the class or the site's node spec (--fabric FILE) expects.

Facts from sysfs (rigcheck/facts/fabric/nics.py). Peers gate the same: Azure's health checks expect
8 x 400 Gb/s InfiniBand ports on an ND H100 v5 and GPUDirect RDMA (reference/peers.md).
"""

import pytest

from rigcheck.facts.fabric.nics import same_switch
from rigcheck.facts.probe import is_error
from rigcheck.require import require

pytestmark = pytest.mark.facts


def readable(value, what: str):
    if is_error(value):
        pytest.fail(f"cannot check: {what} could not be read: {value['error']}", pytrace=False)
    return value


def fabric_of(facts, fabric_expected) -> dict:
    """The fabric section; a node that must have a fabric and shows none fails here."""
    section = require(facts, "fabric")
    if not section["applicable"]:
        pytest.fail(
            f"no RDMA fabric on this node ({section['reason']}), but one is expected: "
            f"{fabric_expected['source']}. Load the NIC driver (mlx5_ib, efa) and check "
            "`ls /sys/class/infiniband`.",
            pytrace=False,
        )
    return section


def counted(fabric, fabric_expected) -> list[dict]:
    """The RDMA devices that count: the expected driver, with a port of the expected layer."""
    counted = []
    for device in fabric["rdma_devices"]:
        name = device["name"]
        driver = fabric_expected.get("driver")
        if driver and readable(device["driver"], f"{name} driver") != driver:
            continue
        layer = fabric_expected.get("link_layer")
        ports = readable(device["ports"], f"{name} ports")
        if layer is None or any(
            readable(p["link_layer"], port_label(name, p)) == layer for p in ports
        ):
            counted.append(device)
    return counted


def port_label(name: str, port: dict) -> str:
    return f"{name} port {port['port']}"


def ports_of(nics: list[dict], expected: dict) -> list[tuple[str, dict]]:
    layer = expected.get("link_layer")
    return [
        (port_label(n["name"], p), p)
        for n in nics
        for p in n["ports"]
        if layer is None or p["link_layer"] == layer
    ]


def describe(expected: dict) -> str:
    layer = expected.get("link_layer") or "RDMA"
    return f"{expected['nics_per_gpu']:g} x {expected['rate_gbps']:g} Gb/s {layer} per GPU"


def test_rdma_nic_count(facts, fabric_expected, expected_gpus):
    nics = counted(fabric_of(facts, fabric_expected), fabric_expected)
    wanted = fabric_expected["nics_per_gpu"] * expected_gpus
    found = ", ".join(n["name"] for n in nics) or "none"
    assert len(nics) >= wanted, (
        f"{len(nics)} RDMA NICs of {wanted:g} expected ({describe(fabric_expected)}, "
        f"{expected_gpus} GPUs; source: {fabric_expected['source']}). Found: {found}. "
        "A missing NIC: check `lspci | grep -i mellanox` and the driver (mlx5_ib, efa)."
    )


def test_rdma_ports_up(facts, fabric_expected):
    nics = counted(fabric_of(facts, fabric_expected), fabric_expected)
    down = []
    for label, port in ports_of(nics, fabric_expected):
        state = readable(port["state"], f"{label} state")
        phys = readable(port["phys_state"], f"{label} phys_state")
        if state != "ACTIVE" or phys != "LinkUp":
            down.append(f"{label}: state {state}, phys_state {phys}")
    assert not down, (
        f"RDMA ports not up: {'; '.join(down)}. Polling/Disabled: check the cable and the switch "
        "port; INIT/ARMED with LinkUp: no subnet manager has configured the port (opensm)."
    )


def test_rdma_port_rate(facts, fabric_expected):
    nics = counted(fabric_of(facts, fabric_expected), fabric_expected)
    wanted = fabric_expected["rate_gbps"]
    slow = [
        f"{label}: {port.get('rate') or readable(port['rate_gbps'], label)}"
        for label, port in ports_of(nics, fabric_expected)
        if readable(port["rate_gbps"], f"{label} rate") < wanted
    ]
    assert not slow, (
        f"RDMA ports below {wanted:g} Gb/s: {'; '.join(slow)} (source: "
        f"{fabric_expected['source']}). A port that trained to a lower speed: reseat or replace "
        "the cable or transceiver."
    )


def test_rdma_nic_pcie_link(facts, fabric_expected):
    """Each NIC's PCIe link trained as wide and as fast as both it and its slot can run: a
    400 Gb/s port behind a link at x8 or at the previous generation cannot reach its rate,
    while the port itself reads ACTIVE at full rate (the kernel says "limited by ... x8 link"
    once, at boot). A NIC wider or faster than its slot is the platform's design, not judged."""
    nics = counted(fabric_of(facts, fabric_expected), fabric_expected)
    links = [
        (n["name"], readable(n["pcie_link"], f"{n['name']} PCIe link"))
        for n in nics
        if "pcie_link" in n  # a snapshot recorded before rigcheck read NIC links has none
    ]
    known = [(name, link) for name, link in links if link is not None]
    if not known:
        pytest.skip(
            "no NIC's PCIe link to judge: virtual functions (their link is the host's), or a "
            "snapshot recorded before rigcheck read NIC links"
        )
    slow = []
    for name, link in known:
        width = min(link["max_width"], link.get("slot_max_width", link["max_width"]))
        # a maximum the kernel names no speed for ('Unknown': a generation newer than the
        # kernel) limits nothing it can say; the known one still does
        known_max = [link[k] for k in ("max_speed_gts", "slot_max_speed_gts") if link.get(k)]
        speed = min(known_max, default=link["speed_gts"])
        if link["width"] < width or link["speed_gts"] < speed:
            slow.append(
                f"{name}: x{link['width']} at {link['speed_gts']:g} GT/s, where it and its "
                f"slot run x{width} at {speed:g} GT/s"
            )
    assert not slow, (
        f"RDMA NICs on a degraded PCIe link: {'; '.join(slow)}. Compare `lspci -vv` LnkSta "
        "with LnkCap and look for 'limited by' in the kernel log; reseat the card, check its "
        "riser or retimer, then the slot."
    )


def test_rdma_nic_placement(facts, fabric_expected):
    """Each NIC next to a GPU and each GPU next to a NIC: same PCIe switch, or NUMA node."""
    fabric = fabric_of(facts, fabric_expected)
    nics = counted(fabric, fabric_expected)
    placement = fabric_expected.get("placement")
    if placement is None:
        pytest.skip("the fabric spec does not judge NIC placement (placement: null)")
    gpus = [(g["index"], readable(g["pci"], f"GPU {g['index']} PCI place")) for g in fabric["gpus"]]
    places = [(n["name"], readable(n["pci"], f"{n['name']} PCI place")) for n in nics]
    if placement == "numa_node":
        bad = short_per_numa_node(places, gpus, fabric_expected["nics_per_gpu"])
    else:
        bad = [
            f"{name} ({place['bus_id']}, NUMA {place['numa_node']}) shares no PCIe switch with "
            "a GPU"
            for name, place in places
            if not any(same_switch(place, g) for _, g in gpus)
        ] + [
            f"GPU {index} ({place['bus_id']}) has no NIC on its PCIe switch"
            for index, place in gpus
            if not any(same_switch(place, p) for _, p in places)
        ]
    assert not bad, (
        f"RDMA NICs placed away from the GPUs: {'; '.join(bad)}. Traffic then crosses the CPU "
        "interconnect: check which slot each NIC is in (`nvidia-smi topo -m`)."
    )


def short_per_numa_node(places: list, gpus: list, per_gpu: float) -> list[str]:
    """Each NUMA node with GPUs holds its share of the NICs; a NIC where no GPU is, is misplaced
    (a VM's PCIe tree hides the switches, the NUMA nodes it keeps)."""
    gpu_nodes: dict[int, list[int]] = {}
    for index, place in gpus:
        gpu_nodes.setdefault(place["numa_node"], []).append(index)
    bad = [
        f"{name} ({place['bus_id']}) is on NUMA node {place['numa_node']}, which has no GPU"
        for name, place in places
        if place["numa_node"] not in gpu_nodes
    ]
    for node, indices in sorted(gpu_nodes.items()):
        here = [name for name, place in places if place["numa_node"] == node]
        if len(here) < per_gpu * len(indices):
            bad.append(
                f"NUMA node {node}: {len(indices)} GPUs ({', '.join(map(str, indices))}) but "
                f"{len(here)} NICs ({', '.join(here) or 'none'})"
            )
    return bad


def test_gpudirect_rdma(facts, fabric_expected):
    if not fabric_expected.get("gpudirect_rdma"):
        pytest.skip("the fabric spec does not expect GPUDirect RDMA")
    fabric = fabric_of(facts, fabric_expected)
    gdr = readable(fabric["gpudirect_rdma"], "GPUDirect RDMA readiness")
    ready = gdr["nvidia_peermem"] or gdr.get("nv_peer_mem") or gdr["dma_buf"]
    assert ready, (
        "no GPUDirect RDMA: nvidia_peermem is not loaded and dma-buf is not possible "
        f"(open kernel module: {gdr.get('nvidia_open_kernel_module')}, kernel {gdr.get('kernel')}; "
        "dma-buf needs both the open module and Linux >= 5.12). `modprobe nvidia_peermem`, "
        "or install the open kernel module."
    )
