"""A fake /sys (and the bits of /proc the fabric probe reads) for an HGX-style node: each GPU
and its ConnectX NIC under one PCIe switch, half the GPUs on each NUMA node.

Keyword arguments break it the ways real nodes break; the probe reads it as it reads /sys.
"""

from __future__ import annotations

import os
from pathlib import Path


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def _link(link: Path, target: Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(os.path.relpath(target, link.parent), link)


def _pci_device(root: Path, bridges: list[str], bus_id: str, numa: int) -> Path:
    path = root / "sys/devices/pci0000:00" / "/".join(bridges) / bus_id
    _write(path / "numa_node", str(numa))
    _link(root / "sys/bus/pci/devices" / bus_id, path)
    return path


def build_node(
    root: Path,
    gpu_bus_ids: list[str],
    *,
    nics: int | None = None,
    down: dict[int, tuple[str, str]] | None = None,  # NIC index -> (state, phys_state)
    rates: dict[int, str] | None = None,  # NIC index -> rate text
    far_nic: int | None = None,  # this NIC sits on the other socket's root port
    peermem: bool = True,
    open_module: bool = False,
    kernel: str = "5.15.0-105-generic",
    ethernet_vf: bool = True,  # the VM's accelerated-networking Ethernet NIC, never counted
    counters: dict[int, dict[str, str]] | None = None,  # NIC index -> counter file -> text
    roce: bool = False,  # the NICs' ports are RoCE (Ethernet), each with a RoCE v2 GID
    mtu: int = 9000,  # the RoCE ports' net device MTU
    links: dict[int, tuple[str, str]] | None = None,  # NIC index -> (current speed, width)
) -> Path:
    half = max(1, len(gpu_bus_ids) // 2)
    for i, bus_id in enumerate(gpu_bus_ids):  # root port, switch upstream, downstream port
        bridges = [f"0000:00:{i + 1:02x}.0", f"0000:{0x80 + 4 * i:02x}:00.0"]
        bridges.append(f"0000:{0x81 + 4 * i:02x}:00.0")
        _pci_device(root, bridges, bus_id.lower(), i // half)
    count = len(gpu_bus_ids) if nics is None else nics
    for i in range(count):
        numa, bridges = i // half, [f"0000:00:{i + 1:02x}.0", f"0000:{0x80 + 4 * i:02x}:00.0"]
        bridges.append(f"0000:{0x81 + 4 * i:02x}:01.0")  # beside GPU i's port on its switch
        if i == far_nic:  # moved to a slot under the other socket, beside no GPU
            numa, bridges = 1 - numa, [f"0000:00:{0x30 + i:02x}.0", f"0000:{0x40 + i:02x}:00.0"]
        state, phys = (down or {}).get(i, ("4: ACTIVE", "5: LinkUp"))
        rate = (rates or {}).get(i, "400 Gb/sec (4X NDR)")
        _nic(
            root,
            f"mlx5_{i}",
            bridges,
            f"0000:{0xC0 + i:02x}:00.0",
            numa,
            state,
            phys,
            rate,
            "Ethernet" if roce else "InfiniBand",
        )
        _pcie_link(root / "sys/bus/pci/devices" / f"0000:{0xC0 + i:02x}:00.0", (links or {}).get(i))
        port = root / f"sys/class/infiniband/mlx5_{i}/ports/1"
        _counters(port, (counters or {}).get(i, {}))
        if roce:
            _roce_gids(port, f"ens{i + 1}np0", i)
        _netdev(root, f"ens{i + 1}np0" if roce else f"ib{i}", mtu if roce else 4092)
    if ethernet_vf:
        _nic(root, f"mlx5_{count}", ["0000:00:1f.0"], "0000:e0:00.0", 0, "4: ACTIVE", "5: LinkUp",
             "100 Gb/sec (2X HDR)", "Ethernet")  # fmt: skip
        _counters(root / f"sys/class/infiniband/mlx5_{count}/ports/1", {})
        _netdev(root, "eth0", 1500)
    if peermem:
        (root / "sys/module/nvidia_peermem").mkdir(parents=True)
    flavour = "Open Kernel Module" if open_module else "Kernel Module"
    _write(
        root / "proc/driver/nvidia/version",
        f"NVRM version: NVIDIA UNIX x86_64 {flavour}  550.54.15",
    )
    _write(root / "proc/sys/kernel/osrelease", kernel)
    return root


# A healthy ConnectX port's error counters: all 0, as the real mlx5_0 in prometheus/procfs's
# sysfs fixture (testdata/fixtures.ttar); fixtures/fabric/counters/procfs-healthy.txt has it.
HEALTHY_COUNTERS = dict.fromkeys(
    ("symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors",
     "port_xmit_discards", "local_link_integrity_errors", "excessive_buffer_overrun_errors",
     "VL15_dropped"), "0")  # fmt: skip


def _counters(port: Path, changed: dict[str, str]) -> None:
    for name, text in {**HEALTHY_COUNTERS, **changed}.items():
        _write(port / "counters" / name, text)


def _pcie_link(device: Path, trained: tuple[str, str] | None) -> None:
    """A ConnectX-7's PCIe link as sysfs gives it (Gen5 x16, its switch port the same), or as
    trained (speed, width) where that is less."""
    pci = device.resolve()
    speed, width = trained or ("32.0 GT/s PCIe", "16")
    for where in (pci, pci.parent):
        _write(where / "max_link_speed", "32.0 GT/s PCIe")
        _write(where / "max_link_width", "16")
    _write(pci / "current_link_speed", speed)
    _write(pci / "current_link_width", width)


def _netdev(root: Path, name: str, mtu: int) -> None:
    _write(root / "sys/class/net" / name / "mtu", str(mtu))
    _write(root / "sys/class/net" / name / "operstate", "up")


def _roce_gids(port: Path, netdev: str, i: int) -> None:
    """The GID table `show_gids` prints for a RoCE port with one IPv4 address: link-local and
    IPv4-mapped GIDs, each as RoCE v1 and v2 (written by hand in that layout, addresses made up)."""
    link_local = f"fe80:0000:0000:0000:0a5c:4ffe:fe8e:{0x2B30 + i:04x}"
    mapped = f"0000:0000:0000:0000:0000:ffff:c0a8:{0x0A01 + i:04x}"
    for index, (gid, kind) in enumerate(
        [
            (link_local, "IB/RoCE v1"),
            (link_local, "RoCE v2"),
            (mapped, "IB/RoCE v1"),
            (mapped, "RoCE v2"),
        ]
    ):
        _write(port / "gids" / str(index), gid)
        _write(port / "gid_attrs/types" / str(index), kind)
        _write(port / "gid_attrs/ndevs" / str(index), netdev)


def _nic(root, name, bridges, bus_id, numa, state, phys, rate, layer) -> None:
    pci = _pci_device(root, bridges, bus_id, numa)
    _link(pci / "driver", root / "sys/bus/pci/drivers/mlx5_core")
    (root / "sys/bus/pci/drivers/mlx5_core").mkdir(parents=True, exist_ok=True)
    ib = pci / "infiniband" / name
    _write(ib / "fw_ver", "28.39.1002")
    _link(ib / "device", pci)
    port = ib / "ports/1"
    for file, text in (
        ("state", state),
        ("phys_state", phys),
        ("rate", rate),
        ("link_layer", layer),
    ):
        _write(port / file, text)
    _link(root / "sys/class/infiniband" / name, ib)
