"""AMD GPU topology: each pair's link as amdsmi sees it (xGMI or PCIe, and hops), and where each
GPU sits (its PCI device's NUMA node and the CPUs the kernel lists as local to it, from sysfs).

The same gpus/pairs layout as topology.py writes for NVML, so the NUMA checks read both; a
pair's link is {"type": "xgmi", "hops": 1} here instead of NVML's NVLink count and PCIe path,
and its p2p {"accessible": true} (amdsmi_is_P2P_accessible) instead of NVML's four capabilities.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rigcheck.facts.nvidia.topology import (
    SYSFS,
    _numa_node_cpus,
    _pci_numa_node,
    format_cpulist,
    nodes_of_cpus,
    parse_cpulist,
)
from rigcheck.facts.probe import error_record, guarded, is_error


def amd_topology(torch_devices: list[dict[str, Any]], pairs: Any,
                 sysfs: Path = SYSFS) -> dict[str, Any]:  # fmt: skip
    numa_cpus = guarded(lambda: _numa_node_cpus(sysfs))
    gpus = [_gpu(d, numa_cpus, sysfs) for d in torch_devices]
    if is_error(pairs):  # amdsmi unusable: every pair carries its reason
        pairs = [
            {"gpus": [a, b], "link": dict(pairs), "p2p": dict(pairs)}
            for a in range(len(gpus))
            for b in range(a + 1, len(gpus))
        ]
    return {"source": "amdsmi", "host_numa_cpus": numa_cpus, "gpus": gpus, "pairs": pairs}


def _gpu(device: dict[str, Any], numa_cpus: Any, sysfs: Path) -> dict[str, Any]:
    bus_id = device.get("pci_bus_id") or error_record("torch reports no PCI bus id")
    cpus = guarded(lambda: _local_cpus(sysfs, bus_id))
    return {
        "index": device["index"],
        "bus_id": bus_id,
        "numa_node": guarded(lambda: _pci_numa_node(sysfs, bus_id)),
        "cpu_affinity": cpus if is_error(cpus) else format_cpulist(cpus),
        "cpu_numa_nodes": guarded(lambda: nodes_of_cpus(cpus, numa_cpus)),
    }


def _local_cpus(sysfs: Path, bus_id: Any) -> list[int]:
    """The CPUs the kernel lists as local to the GPU's PCI device (local_cpulist)."""
    if is_error(bus_id):
        raise ValueError(bus_id["error"])
    return parse_cpulist((sysfs / "bus/pci/devices" / bus_id / "local_cpulist").read_text())
