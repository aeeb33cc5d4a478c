"""Fabric facts: the node's RDMA NICs (InfiniBand, RoCE, EFA) from sysfs, where they sit
relative to the GPUs, and whether GPUDirect RDMA can work.

Read from the files `ibstat`, `ibv_devinfo` and `lspci -t` read:
/sys/class/infiniband/<dev>/ports/<n>/{state,phys_state,rate,link_layer}, <dev>/fw_ver, and the
PCI device behind <dev>/device, whose resolved sysfs path lists every bridge above it (the PCIe
switch ports), and the PCIe link that device trained to (current_/max_link_speed and _width, what
`lspci -vv` shows as LnkSta and LnkCap). GPUDirect RDMA needs the nvidia_peermem module
(/sys/module/nvidia_peermem) or dma-buf, which needs NVIDIA's open kernel module and Linux >= 5.12
(NVIDIA GPUDirect RDMA guide, "Using nvidia-peermem" and "Using DMA-BUF"). Every read that fails
is an error record.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from rigcheck.facts.fabric.nccl_ib import probe_nccl_ib, roce_gids
from rigcheck.facts.fabric.rdma_counters import port_counters
from rigcheck.facts.probe import error_record, guarded, is_error

ROOT = Path("/")
PCI_ADDRESS = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
DMA_BUF_KERNEL = (5, 12)  # dma-buf import into RDMA drivers landed in Linux 5.12


def probe_fabric(devices: Any, root: Path = ROOT) -> dict[str, Any]:
    """The fabric section of the snapshot; never raises."""
    return guarded(lambda: _fabric(devices, root))


def _fabric(devices: Any, root: Path) -> dict[str, Any]:
    classdir = root / "sys/class/infiniband"
    gpus = [_gpu(d, root) for d in devices] if isinstance(devices, list) else []
    gpudirect = guarded(lambda: gpudirect_rdma(root))
    if not classdir.is_dir():
        return {
            "applicable": False,
            "reason": f"no {classdir}: no RDMA device (or no RDMA driver loaded)",
            "rdma_devices": [],
            "gpus": gpus,
            "gpudirect_rdma": gpudirect,
        }
    names = sorted(p.name for p in classdir.iterdir())
    # A fake root (tests) gets no environment: the fixture must not depend on who regenerates it.
    environ = os.environ if root == ROOT else {}
    return {
        "applicable": True,
        "rdma_devices": [_rdma_device(classdir / name) for name in names],
        "gpus": gpus,
        "gpudirect_rdma": gpudirect,
        "nccl_ib": probe_nccl_ib(root, environ, None if root == ROOT else root / "root"),
    }


def _rdma_device(path: Path) -> dict[str, Any]:
    pci = guarded(lambda: pci_place(path / "device"))
    return {
        "name": path.name,
        "driver": guarded(lambda: os.path.basename(os.readlink(path / "device/driver"))),
        "efa": guarded(lambda: os.path.basename(os.readlink(path / "device/driver")) == "efa"),
        "fw_ver": guarded(lambda: _read(path / "fw_ver")),
        "pci": pci,
        "pcie_link": guarded(lambda: pcie_link(path / "device")),
        "ports": guarded(lambda: [_port(p) for p in _ports(path)]),
    }


def _ports(path: Path) -> list[Path]:
    return sorted((path / "ports").iterdir(), key=lambda p: int(p.name))


def _port(path: Path) -> dict[str, Any]:
    rate = guarded(lambda: _read(path / "rate"))
    return {
        "port": int(path.name),
        "state": guarded(lambda: _word(_read(path / "state"))),
        "phys_state": guarded(lambda: _word(_read(path / "phys_state"))),
        "rate": rate,
        "rate_gbps": guarded(lambda: parse_rate(rate)),
        "link_layer": guarded(lambda: _read(path / "link_layer")),
        "counters": guarded(lambda: port_counters(path)),  # rigcheck/facts/fabric/rdma_counters.py
        "gids": guarded(lambda: roce_gids(path)),  # rigcheck/facts/fabric/nccl_ib.py
    }


def _gpu(device: dict[str, Any], root: Path) -> dict[str, Any]:
    pci = device.get("pci") if isinstance(device, dict) else None
    bus_id = pci.get("bus_id") if isinstance(pci, dict) else None
    if not isinstance(bus_id, str):
        return {"index": device.get("index"), "pci": error_record(f"no PCI bus id ({bus_id!r})")}
    place = guarded(lambda: pci_place(root / "sys/bus/pci/devices" / bus_id.lower()))
    return {"index": device.get("index"), "pci": place}


def pci_place(device_link: Path) -> dict[str, Any]:
    """The PCI address, NUMA node and upstream bridges (root port first) of a sysfs device."""
    resolved = device_link.resolve(strict=True)
    chain = [part for part in resolved.parts if PCI_ADDRESS.match(part)]
    if not chain:
        raise ValueError(f"{device_link} -> {resolved} is not a PCI device")
    numa = int(_read(resolved / "numa_node"))
    return {"bus_id": chain[-1], "numa_node": numa, "bridges": chain[:-1]}


def pcie_link(device_link: Path) -> dict[str, Any] | None:
    """The PCIe link a device trained to, what it can run, and what the port above it can run
    (Documentation/ABI/testing/sysfs-bus-pci); None where the kernel reports no link (a virtual
    function, whose link the host owns: speed "Unknown", width 0; a kernel before 4.13)."""
    device = device_link.resolve(strict=True)
    if not (device / "current_link_width").exists():
        return None
    width, speed = int(_read(device / "current_link_width")), _read(device / "current_link_speed")
    if not width or speed.startswith("Unknown"):
        return None
    link = {
        "width": width,
        "speed_gts": _gts(speed),
        "max_width": int(_read(device / "max_link_width")),
        "max_speed_gts": _gts(_read(device / "max_link_speed")),
    }
    above = device.parent  # the switch's downstream port or the root port: the slot
    if PCI_ADDRESS.match(above.name) and (above / "max_link_width").exists():
        link["slot_max_width"] = int(_read(above / "max_link_width"))
        link["slot_max_speed_gts"] = _gts(_read(above / "max_link_speed"))
    return link


def _gts(text: str) -> float | None:
    """'32.0 GT/s PCIe' (or '8 GT/s', older kernels) -> 32.0; None for 'Unknown': a kernel
    that predates the link's generation names no speed for it."""
    if text.startswith("Unknown"):
        return None
    match = re.match(r"\s*([\d.]+)\s*GT/s", text)
    if not match:
        raise ValueError(f"link speed {text!r} is not '<n> GT/s'")
    return float(match.group(1))


def gpudirect_rdma(root: Path) -> dict[str, Any]:
    """What GPUDirect RDMA needs: a peer-memory module, or dma-buf (open module, Linux >= 5.12)."""
    version = root / "proc/driver/nvidia/version"
    open_module = "Open Kernel Module" in _read(version) if version.exists() else None
    kernel = os.uname().release if root == ROOT else _read(root / "proc/sys/kernel/osrelease")
    kernel_ok = tuple(int(x) for x in re.findall(r"\d+", kernel)[:2]) >= DMA_BUF_KERNEL
    return {
        "nvidia_peermem": (root / "sys/module/nvidia_peermem").is_dir(),
        "nv_peer_mem": (root / "sys/module/nv_peer_mem").is_dir(),  # Mellanox's older module
        "nvidia_open_kernel_module": open_module,
        "kernel": kernel,
        "dma_buf": bool(open_module) and kernel_ok,
    }


def parse_rate(rate: Any) -> float:
    """'400 Gb/sec (4X NDR)' -> 400.0."""
    if is_error(rate):
        raise ValueError(rate["error"])
    match = re.match(r"\s*([\d.]+)\s*Gb/sec", rate)
    if not match:
        raise ValueError(f"rate {rate!r} is not '<n> Gb/sec (...)'")
    return float(match.group(1))


def _word(text: str) -> str:
    """'4: ACTIVE' -> 'ACTIVE' (sysfs gives the number and the name)."""
    return text.partition(":")[2].strip() or text


def _read(path: Path) -> str:
    return path.read_text().strip()


def same_switch(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Under one PCIe switch: the same root port and the same switch upstream port above both."""
    shared = 0
    for x, y in zip(a["bridges"], b["bridges"], strict=False):
        if x != y:
            break
        shared += 1
    return shared >= 2
