"""A facts snapshot whose NVML facts come from rigcheck's own probes over the simulator.

The rest of the snapshot (host, torch, kernel log, NICs) is the class's synthetic snapshot: the
simulator stands in for libnvidia-ml only, so only what rigcheck reads through NVML is replaced:
the driver facts, every device record (but its sysfs AER counts) and the topology.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any
from unittest import mock

from rigcheck.testing.nvml_sim.install import simulated_nvml
from rigcheck.testing.nvml_sim.links import parse_cpulist


def fake_sysfs(root: Path, machine: dict[str, Any]) -> Path:
    """/sys as topology.py reads it: each GPU's PCI numa_node and each NUMA node's CPUs."""
    nodes: dict[int, set[int]] = {}
    for gpu in machine["gpus"]:
        cpus = parse_cpulist(gpu["cpu_affinity"])
        node = 0 if 0 in cpus else 1  # the profiles put socket 0's CPUs first
        nodes.setdefault(node, set()).update(cpus)
        bus = gpu["pci"]["bus_id"][-12:].lower()
        (root / "bus/pci/devices" / bus).mkdir(parents=True, exist_ok=True)
        (root / "bus/pci/devices" / bus / "numa_node").write_text(f"{node}\n")
    for node, cpus in nodes.items():
        folder = root / f"devices/system/node/node{node}"
        folder.mkdir(parents=True, exist_ok=True)
        first, last = min(cpus), max(cpus)
        (folder / "cpulist").write_text(_cpulist(sorted(cpus)) if cpus else f"{first}-{last}")
    return root


def _cpulist(cpus: list[int]) -> str:
    from rigcheck.facts.nvidia.topology import format_cpulist

    return format_cpulist(cpus) + "\n"


def nvml_facts(machine: dict[str, Any], driver: str, sysfs: Path) -> tuple[dict, list, dict, Any]:
    """(driver facts, devices, topology, the simulated library) from rigcheck's probes."""
    from rigcheck.facts.nvidia.nvml import probe_nvidia
    from rigcheck.facts.nvidia.topology import probe_topology

    cpus = max(max(parse_cpulist(g["cpu_affinity"])) for g in machine["gpus"]) + 1
    with simulated_nvml(machine, driver) as lib, mock.patch.object(os, "cpu_count", lambda: cpus):
        software, devices = probe_nvidia()
        topology = probe_topology(sysfs)
    return software, devices, topology, lib


def simulated_snapshot(base: dict[str, Any], machine: dict[str, Any], driver: str,
                       sysfs: Path) -> tuple[dict[str, Any], Any]:  # fmt: skip
    """`base` (a synthetic snapshot of the same class and GPU count) with its NVML facts read
    through the simulator; also the library, whose calls and crashes tests look at."""
    software, devices, topology, lib = nvml_facts(machine, driver, sysfs)
    snapshot = copy.deepcopy(base)
    for device, synthetic in zip(devices, snapshot["devices"], strict=True):
        device["pcie_aer"] = synthetic["pcie_aer"]  # sysfs, not NVML
    snapshot["software"]["nvidia_driver"] = software
    snapshot["devices"] = devices
    snapshot["topology"] = topology
    snapshot["origin"] = {
        "kind": "synthetic",
        "note": f"NVML facts read by rigcheck's probes through pynvml over "
        "rigcheck/testing/nvml_sim "
        f"({machine['name']}, {driver}); the rest from rigcheck.testing.synthetic",
    }
    return snapshot, lib
