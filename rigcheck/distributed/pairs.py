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
# it depends on the chipset, so a PCIe-only class expects it only here.
P2P_PCIE_PATHS = {"BOARD", "PIX", "PXB"}
SLOW_RATIO = 0.75  # DCGM's convention: a healthy part is within 0.75 x of its measured peers
MIN_GROUP = 3  # fewer pairs than this on one kind of path: no "others" to compare with


def path_words(path: str) -> str:
    return f"{path}, {PCIE_WORDS[path]}" if path in PCIE_WORDS else str(path)


def pair_label(a: Any, b: Any, host: str | None = None) -> str:
    return f"{host + ' ' if host else ''}GPU {a} <-> GPU {b}"


def link_kind(pair: dict[str, Any]) -> str:
    """'NV18 (NVSwitch)', 'NV4', or the PCIe path: how a topology pair is joined."""
    nvlink = pair.get("nvlink")
    if isinstance(nvlink, dict) and nvlink.get("links"):
        via = " through NVSwitch" if nvlink.get("via") == "nvswitch" else ""
        return f"NV{nvlink['links']}{via}"
    return f"PCIe {pair.get('pcie_path')}"


def p2p_expected(link_type: str, pair: dict[str, Any]) -> bool:
    """Does the class expect P2P on this pair: every NVLink pair, PCIe pairs below the CPU."""
    if link_type == "nvlink":
        return True
    if link_type == "pcie_only":
        return pair.get("pcie_path") in P2P_PCIE_PATHS
    return False


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
