"""Each GPU's and RDMA NIC's IOMMU group and the DMA domain type the kernel gave it.

The boot flags (iommu=pt ...) say what was asked for; the group's type says what the kernel
did: /sys/bus/pci/devices/<BDF>/iommu_group/type (Linux 5.11 and later, readable by anyone)
is "identity" for passthrough, "DMA" or "DMA-FQ" when the IOMMU translates the device's DMA
(peer-to-peer then goes through the root complex, or is blocked), "blocked" when the device
may do no DMA, "unmanaged" when a driver such as vfio owns the domain. A kernel built with
CONFIG_IOMMU_DEFAULT_PASSTHROUGH passes through with no flag at all, which only the type shows.
A device with no iommu_group link is one no IOMMU translates (the IOMMU is off).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from rigcheck.facts.probe import error_record, guarded

ROOT = Path("/")
# The strings iommu_group_show_type() writes (drivers/iommu/iommu.c); "unknown" is not a type.
DOMAIN_TYPES = ("identity", "DMA", "DMA-FQ", "blocked", "unmanaged")
TRANSLATED = ("DMA", "DMA-FQ", "blocked")  # types that stop or reroute GPU peer-to-peer


def probe_iommu_devices(devices: Any, root: Path = ROOT) -> Any:
    """One entry per GPU (by its PCI bus id) and per RDMA NIC; never raises."""
    return guarded(lambda: _entries(devices, root))


def _entries(devices: Any, root: Path) -> list[dict[str, Any]]:
    if not (root / "sys/bus/pci/devices").is_dir():
        raise FileNotFoundError(f"{root / 'sys/bus/pci/devices'} does not exist (not Linux?)")
    entries = []
    for device in devices if isinstance(devices, list) else []:
        pci = device.get("pci") if isinstance(device, dict) else None
        bus_id = pci.get("bus_id") if isinstance(pci, dict) else None
        if isinstance(bus_id, str):
            name = f"GPU {device.get('index')}"
            entries.append(_entry("gpu", name, bus_id.lower(), root))
    nics = root / "sys/class/infiniband"
    for nic in sorted(nics.iterdir()) if nics.is_dir() else []:
        bus_id = guarded(lambda nic=nic: (nic / "device").resolve(strict=True).name)
        if isinstance(bus_id, str):
            entries.append(_entry("rdma", nic.name, bus_id, root))
    return entries


def _entry(role: str, name: str, bus_id: str, root: Path) -> dict[str, Any]:
    return {"role": role, "name": name, "bus_id": bus_id, **_group(root, bus_id)}


def _group(root: Path, bus_id: str) -> dict[str, Any]:
    """{"group": N, "type": ...}; group and type None when no IOMMU group holds the device."""
    device = root / "sys/bus/pci/devices" / bus_id
    if not device.exists():
        missing = error_record(f"{device} does not exist: is /sys mounted (containers)?")
        return {"group": missing, "type": missing}
    link = device / "iommu_group"
    if not link.exists():
        return {"group": None, "type": None}
    group = int(os.path.basename(os.readlink(link)))
    type_file = link / "type"
    if not type_file.exists():
        reason = f"{type_file} does not exist (Linux before 5.11 does not show the domain type)"
        return {"group": group, "type": error_record(reason)}
    return {"group": group, "type": guarded(lambda: type_file.read_text().strip())}
