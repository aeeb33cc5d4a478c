"""AMD facts: devices as ROCm torch sees them, product ids from sysfs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rigcheck.facts.probe import guarded


def amd_devices(torch_devices: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Turn the torch probe's ROCm device list into device facts."""
    return [_device(d) for d in torch_devices]


def _device(d: dict[str, Any]) -> dict[str, Any]:
    bus_id = d.get("pci_bus_id")
    return {
        "index": d["index"],
        "vendor": "amd",
        "name": d["name"],
        "gcn_arch": d.get("gcn_arch"),
        "compute_capability": d.get("compute_capability"),
        "memory_total_bytes": d["total_memory_bytes"],
        "pci": guarded(lambda: _pci(bus_id)),
    }


def _pci(bus_id: str | None) -> dict[str, str]:
    if not bus_id:
        raise RuntimeError("torch reports no PCI bus id for this device")
    node = Path("/sys/bus/pci/devices") / bus_id
    return {
        "bus_id": bus_id,
        "device_id": f"0x{int((node / 'device').read_text(), 16):04X}",
        "vendor_id": f"0x{int((node / 'vendor').read_text(), 16):04X}",
    }
