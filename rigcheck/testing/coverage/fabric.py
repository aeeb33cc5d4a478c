"""The RDMA fabric of a campaign node: the node spec its user passes with --fabric
(docs/fabric/), and a /sys tree per node that rigcheck's fabric probe reads as it reads a real
one (rigcheck/facts/fabric/nics.py, rdma_counters.py: /sys/class/infiniband/*/ports/*/{state,
phys_state,rate,counters/*,hw_counters/*}, each NIC's PCI device and the GPUs' PCIe switches).

Healthy variation is real: each port's counter files are those of a real healthy port
(fixtures/fabric/counters/procfs-healthy.txt, prometheus/procfs's sysfs capture: traffic and
mlx5 driver counters vary, every IBTA error counter reads 0 there). The signatures (causes.json,
kinds below) change the tree, never a judged fact."""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from rigcheck.facts.fabric.nics import probe_fabric
from rigcheck.facts.fabric.rdma_counters import sample_ports
from rigcheck.layout import ROOT_DIR

REPO = Path(ROOT_DIR)
# The --fabric file a user of each class's node passes: the node's own published NICs.
SPECS = {
    "h100": "docs/fabric/dgx-h100.json",
    "b200": "docs/fabric/dgx-b200.json",
    "a100_40gb": "docs/fabric/dgx-a100.json",
    "mi300x": "docs/fabric/azure-nd-mi300x-v5.json",
}
# Each class's port as the kernel's rate file writes it (drivers/infiniband/core/sysfs.c,
# rate_show: "<Gb/s> Gb/sec (<width>X <speed>)"), and its NIC's PCIe link (Gen5 x16 for a
# ConnectX-7, Gen4 x16 for a ConnectX-6) as current_link_speed/_width write it.
PORTS = {
    "h100": ("400 Gb/sec (4X NDR)", "32.0 GT/s PCIe"),
    "b200": ("400 Gb/sec (4X NDR)", "32.0 GT/s PCIe"),
    "a100_40gb": ("200 Gb/sec (4X HDR)", "16.0 GT/s PCIe"),
    "mi300x": ("400 Gb/sec (4X NDR)", "32.0 GT/s PCIe"),
}
HEALTHY_LISTING = REPO / "fixtures" / "fabric" / "counters" / "procfs-healthy.txt"
# Per-lane speed of each IB data rate (Gb/s), to write a port that trained slower.
LANE_GBPS = {"EDR": 25, "HDR": 50, "NDR": 100, "XDR": 200}
SLOWER = {"NDR": "HDR", "HDR": "EDR", "XDR": "NDR"}


@dataclass
class Nic:
    name: str
    bus_id: str
    slot: int  # the GPU slot whose PCIe switch it shares
    state: str = "4: ACTIVE"
    phys_state: str = "5: LinkUp"
    rate: str = ""
    counters: dict[str, str] = field(default_factory=dict)  # counters/ file -> text
    hw_counters: dict[str, str] = field(default_factory=dict)  # hw_counters/ file -> text
    grows: dict[str, int] = field(default_factory=dict)  # counter -> rise during the burn-in
    link: dict[str, str] = field(default_factory=dict)  # PCI link file -> text


@dataclass
class Fabric:
    spec: Path  # the --fabric node spec
    gpu_buses: list[str]  # the node's GPUs when healthy: slot i is gpu_buses[i]
    nics: list[Nic]
    gone: list[Nic] = field(default_factory=list)  # NICs no longer on the PCI bus


@cache
def healthy_ports() -> tuple[tuple[dict[str, str], dict[str, str]], ...]:
    """(counters, hw_counters) of each port in the real healthy listing."""
    ports: dict[str, tuple[dict[str, str], dict[str, str]]] = {}
    for line in HEALTHY_LISTING.read_text().splitlines():
        if not line.startswith("/"):
            continue  # the comment naming the source
        path, _, value = line.partition(":")
        parts = path.split("/")  # /sys/class/infiniband/DEV/ports/N/KIND/NAME
        if len(parts) == 9 and parts[7] in ("counters", "hw_counters"):
            counters, hw = ports.setdefault(f"{parts[4]}/{parts[6]}", ({}, {}))
            (counters if parts[7] == "counters" else hw)[parts[8]] = value
    return tuple(ports.values())


def has_fabric(cls: str) -> bool:
    return cls in SPECS


def healthy_fabric(cls: str, gpu_buses: list[str], rng: random.Random) -> Fabric:
    """One NIC per GPU on its PCIe switch (the DGX layout), each port's counters a real
    healthy port's."""
    rate, speed = PORTS[cls]
    buses = _free_buses(gpu_buses)
    nics = []
    for slot in range(len(gpu_buses)):
        counters, hw = rng.choice(healthy_ports())
        link = {"current_link_speed": speed, "max_link_speed": speed,
                "current_link_width": "16", "max_link_width": "16"}  # fmt: skip
        nics.append(Nic(f"mlx5_{slot}", buses[slot], slot, rate=rate, counters=dict(counters),
                        hw_counters=dict(hw), link=link))  # fmt: skip
    return Fabric(REPO / SPECS[cls], [b.lower() for b in gpu_buses], nics)


def _free_buses(gpu_buses: list[str]) -> list[str]:
    taken = {int(b.split(":")[1], 16) for b in gpu_buses}
    free = [n for n in range(0x20, 0xFF) if n not in taken]
    return [f"0000:{n:02x}:00.0" for n in free[: len(gpu_buses)]]


def fabric_facts(fabric: Fabric, devices: list[dict[str, Any]], root: Path) -> dict[str, Any]:
    """The snapshot's fabric section: the node's tree written under root, read by the probe."""
    build_tree(fabric, devices, root)
    return probe_fabric(devices, root)


def burn_in_samples(fabric: Fabric, root: Path) -> dict[str, Any]:
    """The trace's rdma_counters: every port sampled by the real reader before the load, and
    after it, when the counters a fault makes grow have grown."""
    before = sample_ports(root)
    for nic in fabric.nics:
        for name, rise in nic.grows.items():
            nic.counters[name] = str(int(nic.counters.get(name, "0")) + rise)
            _write(_port(root, nic) / "counters" / name, nic.counters[name])
    return {"before": before, "after": sample_ports(root)}


def build_tree(fabric: Fabric, devices: list[dict[str, Any]], root: Path) -> Path:
    for device in devices:  # the GPUs still on the bus, each under its slot's switch
        pci = device.get("pci")
        if not isinstance(pci, dict) or not isinstance(pci.get("bus_id"), str):
            continue  # a lost GPU answers no bus id: the probe records that itself
        bus = pci["bus_id"].lower()
        slot = fabric.gpu_buses.index(bus) if bus in fabric.gpu_buses else len(fabric.gpu_buses)
        _pci(root, _switch(slot, "00"), bus, _numa(slot, fabric))
    for nic in fabric.nics:
        pci = _pci(root, _switch(nic.slot, "01"), nic.bus_id, _numa(nic.slot, fabric))
        for name, text in nic.link.items():
            _write(pci / name, text)
            if name.startswith("max_"):  # the slot above it: the switch port runs as much
                _write(pci.parent / name, text)
        _link(pci / "driver", root / "sys/bus/pci/drivers/mlx5_core")
        (root / "sys/bus/pci/drivers/mlx5_core").mkdir(parents=True, exist_ok=True)
        ib = pci / "infiniband" / nic.name
        _write(ib / "fw_ver", "28.39.1002")  # as tests/replay/fake_sysfs.py: not judged
        _link(ib / "device", pci)
        _link(root / "sys/class/infiniband" / nic.name, ib)
        port = ib / "ports/1"
        for name, text in (("state", nic.state), ("phys_state", nic.phys_state),
                           ("rate", nic.rate), ("link_layer", "InfiniBand")):  # fmt: skip
            _write(port / name, text)
        for kind in ("counters", "hw_counters"):
            for name, text in getattr(nic, kind).items():
                _write(port / kind / name, text)
        _write(root / "sys/class/net" / f"ib{nic.slot}" / "mtu", "4092")
        _write(root / "sys/class/net" / f"ib{nic.slot}" / "operstate", "up")
    (root / "sys/class/infiniband").mkdir(parents=True, exist_ok=True)
    _write(root / "sys/class/net/eth0/mtu", "1500")  # the host's own network, never counted
    _write(root / "sys/class/net/eth0/operstate", "up")
    (root / "sys/module/nvidia_peermem").mkdir(parents=True, exist_ok=True)
    _write(root / "proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module")
    _write(root / "proc/sys/kernel/osrelease", "5.15.0-105-generic")
    return root


def _switch(slot: int, port: str) -> list[str]:
    """Root port, switch upstream port, and the downstream port (00: the GPU's, 01: the NIC's)."""
    return [f"0000:00:{slot + 1:02x}.0", f"0000:{0x80 + 4 * slot:02x}:00.0",
            f"0000:{0x81 + 4 * slot:02x}:{port}.0"]  # fmt: skip


def _numa(slot: int, fabric: Fabric) -> int:
    return slot * 2 // max(2, len(fabric.gpu_buses))


def _pci(root: Path, bridges: list[str], bus_id: str, numa: int) -> Path:
    path = root / "sys/devices/pci0000:00" / "/".join(bridges) / bus_id
    _write(path / "numa_node", str(numa))
    _link(root / "sys/bus/pci/devices" / bus_id, path)
    return path


def _port(root: Path, nic: Nic) -> Path:
    return root / "sys/class/infiniband" / nic.name / "ports/1"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def _link(link: Path, target: Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    if not link.is_symlink():
        os.symlink(os.path.relpath(target, link.parent), link)


# Injections: (node, gpu, signature, rng) -> injected; the NIC on the chosen GPU's switch.


def _nic_of(node, gpu: dict) -> Nic | None:
    fabric = node.fabric
    if fabric is None:
        return None
    slot = node.machine["gpus"].index(gpu)
    return next((n for n in fabric.nics if n.slot == slot), None)


def _port_state(node, gpu: dict, sig: dict, rng: random.Random) -> bool:
    nic = _nic_of(node, gpu)
    if nic is None:
        return False
    nic.state, nic.phys_state = rng.choice(sig["states"])
    if nic.state.endswith("DOWN"):
        # a port with no link reads the lowest rate: ibstat's "Rate: 10" for a port Down and
        # Polling (https://wiki.archlinux.org/title/InfiniBand, its ibstat example)
        nic.rate = "10 Gb/sec (4X SDR)"
    return True


def _port_rate(node, gpu: dict, sig: dict, rng: random.Random) -> bool:
    """The port trained narrower (4X -> 2X or 1X) or at the previous generation's speed."""
    nic = _nic_of(node, gpu)
    if nic is None:
        return False
    width, speed = _parse_rate(nic.rate)
    if sig["mode"] == "width":
        width = rng.choice([w for w in (1, 2) if w < width])
    else:
        speed = SLOWER[speed]
    nic.rate = f"{width * LANE_GBPS[speed]} Gb/sec ({width}X {speed})"
    return True


def _parse_rate(rate: str) -> tuple[int, str]:
    """'400 Gb/sec (4X NDR)' -> (4, 'NDR'): the port's width and lane speed."""
    width, _, speed = rate.partition("(")[2].rstrip(")").partition("X ")
    return int(width), speed


def _error_counters(node, gpu: dict, sig: dict, rng: random.Random) -> bool:
    """Errors counted since the driver loaded, above the check's limit."""
    nic = _nic_of(node, gpu)
    if nic is None:
        return False
    for name, (low, high) in sig["counts"].items():
        nic.counters[name] = str(rng.randint(low, high))
    return True


def _link_flap(node, gpu: dict, sig: dict, rng: random.Random) -> bool:
    """The link goes down or retrains while the burn-in loads it (counters sampled around it)."""
    nic = _nic_of(node, gpu)
    if nic is None:
        return False
    low, high = sig["times"]
    nic.grows[rng.choice(sig["counters"])] = rng.randint(low, high)
    return True


def _nic_gone(node, gpu: dict, sig: dict, rng: random.Random) -> bool:
    """The HCA is no longer on the PCI bus: no device, no /sys/class/infiniband entry."""
    nic = _nic_of(node, gpu)
    if nic is None:
        return False
    node.fabric.nics.remove(nic)
    node.fabric.gone.append(nic)
    return True


def _nic_pcie(node, gpu: dict, sig: dict, rng: random.Random) -> bool:
    """The NIC's PCIe link trained narrower or slower than it and its slot can run."""
    nic = _nic_of(node, gpu)
    if nic is None:
        return False
    if "width" in sig:
        nic.link["current_link_width"] = str(sig["width"])
    else:  # the previous generation: half the GT/s ("32.0 GT/s PCIe" -> "16.0 GT/s PCIe")
        rate, _, unit = nic.link["max_link_speed"].partition(" ")
        nic.link["current_link_speed"] = f"{float(rate) / 2:.1f} {unit}"
    return True


INJECT = {
    "rdma_port_state": _port_state,
    "rdma_port_rate": _port_rate,
    "rdma_error_counters": _error_counters,
    "rdma_link_flap": _link_flap,
    "rdma_nic_gone": _nic_gone,
    "rdma_nic_pcie": _nic_pcie,
}
