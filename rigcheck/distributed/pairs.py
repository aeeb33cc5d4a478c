"""GPU pairs: how they are described, where P2P is expected, and which pair is slow.

Shared by the topology checks (facts) and the peer-copy checks (measurements), so both name a
pair the same way: "GPU 3 <-> GPU 5", with NVML's GPU numbers where the bus ids can be matched.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

# nvidia-smi topo -m's legend, in the words a message uses.
PCIE_WORDS = {
    "BOARD": "on one board",
    "PIX": "through one PCIe switch",
    "PXB": "through several PCIe switches",
    "PHB": "through a PCIe host bridge (the CPU)",
    "NODE": "across host bridges within one NUMA node",
    "SYS": "across CPU sockets (the SMP interconnect)",
}
# Below the host bridge PCIe P2P needs nothing but the switches (with ACS off); through the CPU
# it depends on the chipset, so a class with PCIe P2P expects it only here.
P2P_PCIE_PATHS = {"BOARD", "PIX", "PXB"}
PCIE_P2P_LINKS = {"nvlink", "pcie_only", "optional_bridge"}  # the class's gpu_link type
SLOW_RATIO = 0.75  # DCGM's convention: a healthy part is within 0.75 x of its measured peers
MIN_GROUP = 3  # fewer pairs than this on one kind of path: no "others" to compare with


def path_words(path: str) -> str:
    return f"{path}, {PCIE_WORDS[path]}" if path in PCIE_WORDS else str(path)


def pair_label(a: Any, b: Any, host: str | None = None) -> str:
    return f"{host + ' ' if host else ''}GPU {a} <-> GPU {b}"


def link_kind(pair: dict[str, Any]) -> str:
    """'NV18 (NVSwitch)', 'NV4', or the PCIe path: how a topology pair is joined; on AMD
    (amdsmi's pairs) 'xgmi, 1 hop'."""
    amd = pair.get("link")
    if isinstance(amd, dict) and "type" in amd:
        return f"{amd['type']}, {amd.get('hops')} hop"
    nvlink = pair.get("nvlink")
    if isinstance(nvlink, dict) and nvlink.get("links"):
        via = " through NVSwitch" if nvlink.get("via") == "nvswitch" else ""
        return f"NV{nvlink['links']}{via}"
    return f"PCIe {pair.get('pcie_path')}"


def has_nvlink(pair: dict[str, Any]) -> bool:
    nvlink = pair.get("nvlink")
    return isinstance(nvlink, dict) and bool(nvlink.get("links"))


def p2p_expected(link_type: str, pair: dict[str, Any]) -> bool:
    """Does the class expect P2P on this pair: on NVLink always; over PCIe below the CPU, unless
    NVML says the GPU itself does not do P2P (GeForce boards: gpu_not_supported)."""
    if has_nvlink(pair):
        return True
    if (pair.get("p2p") or {}).get("read") == "gpu_not_supported":
        return False
    return link_type in PCIE_P2P_LINKS and pair.get("pcie_path") in P2P_PCIE_PATHS


class NodeTopology:
    """One node's topology facts, looked up by GPU bus id (how measurements name GPUs)."""

    def __init__(self, topology: Any):
        ok = isinstance(topology, dict) and isinstance(topology.get("gpus"), list)
        gpus = topology["gpus"] if ok else []
        self.index_by_bus = {g["bus_id"]: g["index"] for g in gpus if isinstance(g["bus_id"], str)}
        pairs = topology.get("pairs", []) if ok else []
        self.pairs = {tuple(sorted(p["gpus"])): p for p in pairs}

    def gpu(self, bus_id: str | None, fallback: Any) -> Any:
        return self.index_by_bus.get(bus_id, fallback)

    def pair(self, a: Any, b: Any) -> dict[str, Any] | None:
        return self.pairs.get(tuple(sorted((a, b))))


@dataclass(frozen=True)
class MeasuredPair:
    label: str
    group: str  # pairs on the same kind of path are compared with each other
    gbps: float


def slow_pairs(pairs: Iterable[MeasuredPair]) -> list[str]:
    """Pairs below SLOW_RATIO x the median of the other pairs on the same kind of path."""
    groups: dict[str, list[MeasuredPair]] = defaultdict(list)
    for pair in pairs:
        groups[pair.group].append(pair)
    slow = []
    for group, members in groups.items():
        if len(members) < MIN_GROUP:
            continue
        for pair in members:
            others = statistics.median(p.gbps for p in members if p is not pair)
            if pair.gbps < SLOW_RATIO * others:
                slow.append(
                    f"{pair.label}: {pair.gbps:.0f} GB/s, others {others:.0f} "
                    f"(median of {len(members) - 1} {group} pairs)"
                )
    return slow
