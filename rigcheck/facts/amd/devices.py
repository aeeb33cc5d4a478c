"""AMD facts: devices as ROCm torch sees them, product ids from sysfs, health through amdsmi
(smi.py) and the host's ROCm versions (rocm.py)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from rigcheck.facts.amd.rocm import probe_rocm
from rigcheck.facts.amd.smi import KEYS, load_amdsmi, probe_amd_health
from rigcheck.facts.amd.topology import amd_topology
from rigcheck.facts.nvidia import counters
from rigcheck.facts.probe import error_record, guarded


def amd_devices(torch_devices: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Turn the torch probe's ROCm device list into device facts (identity only)."""
    return [_device(d) for d in torch_devices]


def probe_amd(
    torch_devices: list[dict[str, Any]], load: Callable[[], Any] = load_amdsmi
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The device facts with amdsmi's health facts merged in, and the node's other AMD facts:
    {"rocm": software.rocm, "topology": the topology section}."""
    devices = amd_devices(torch_devices)
    health, library = probe_amd_health([d.get("pci_bus_id") for d in torch_devices], load)
    no_bus = error_record("torch reports no PCI bus id for this device: amdsmi cannot find it")
    for device, d in zip(devices, torch_devices, strict=True):
        device.update(health.get(d.get("pci_bus_id")) or {k: dict(no_bus) for k in KEYS})
        device["pcie_aer"] = guarded(partial(_aer, d.get("pci_bus_id")))
    if "error" in library:  # amdsmi unusable: the library facts carry its reason
        rocm, pairs = probe_rocm(dict(library), dict(library)), dict(library)
    else:
        rocm, pairs = probe_rocm(library["driver"], library["lib_version"]), library["pairs"]
    return devices, {"rocm": rocm, "topology": amd_topology(torch_devices, pairs)}


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


def _aer(bus_id: str | None) -> Any:
    """The kernel's AER totals for the GPU's PCI function (sysfs, as for NVIDIA GPUs)."""
    return counters._aer(counters.SYSFS_PCI, bus_id)


def _pci(bus_id: str | None) -> dict[str, str]:
    if not bus_id:
        raise RuntimeError("torch reports no PCI bus id for this device")
    node = Path("/sys/bus/pci/devices") / bus_id
    return {
        "bus_id": bus_id,
        "device_id": f"0x{int((node / 'device').read_text(), 16):04X}",
        "vendor_id": f"0x{int((node / 'vendor').read_text(), 16):04X}",
    }
