"""AMD device profiles whose every number a probe copies is distinct (hypothesis), and the pairs
of fields a probe could confuse: see rigcheck/testing/distinct.py.

Profile keys are the amdsmi.h struct fields the simulator fills by name (node.py), so a fact
that equals its profile field holds the field amdsmi.h names. Values stay inside what the C
types and rigcheck's readers take: PCIe speeds are the transfer rates a generation runs at
(MT/s, the only values amdsmi reports), power caps whole watts written in microwatts (the
release before ROCm 6.1.2 answers them in watts), and no counter is all ones ("N/A").
"""

from __future__ import annotations

from typing import Any

from rigcheck.testing.amdsmi_sim.node import Node
from rigcheck.testing.amdsmi_sim.profiles import load_profile
from rigcheck.testing.distinct import Path, put

SPEEDS = (2500, 5000, 8000, 16000, 32000, 64000)  # MT/s per lane, PCIe 1.0 ... 6.0
COUNTS = [("ecc_total", k) for k in ("correctable_count", "uncorrectable_count", "deferred_count")]
COUNTERS = ("pcie_replay_count", "pcie_l0_to_recovery_count", "pcie_nak_sent_count",
            "pcie_nak_received_count")  # fmt: skip
PCIE = [("pcie", "pcie_metric", k) for k in COUNTERS]
TEMPERATURES = [("temperature", "HOTSPOT", k) for k in ("CURRENT", "CRITICAL", "EMERGENCY")]
CAPS = [("power_cap", k) for k in ("power_cap", "default_power_cap", "max_power_cap")]
WIDTHS = [("pcie", "pcie_metric", "pcie_width"), ("pcie", "pcie_static", "max_pcie_width")]


def distinct_node(bus_ids: list[str], profile: str = "mi300x_8gpu") -> Any:
    """A hypothesis strategy: a Node of the profile's GPUs at `bus_ids`, each GPU's counts,
    temperatures, caps, widths, speeds and ECC blocks distinct, within it and across GPUs."""
    from hypothesis import strategies as st  # a self-test dependency, not a runtime one

    numbers = _numbers(profile)
    per_gpu = st.fixed_dictionaries({
        "numbers": st.just(numbers),
        "caps_w": st.lists(st.integers(1, 5000), min_size=3, max_size=3, unique=True),
        "widths": st.lists(st.integers(1, 2**15), min_size=2, max_size=2, unique=True),
        "speeds": st.permutations(SPEEDS).map(lambda s: s[:2]),
    })  # fmt: skip
    n = len(bus_ids) * len(numbers)
    values = st.lists(st.integers(1, 2**31), min_size=n, max_size=n, unique=True)
    gpus = st.lists(per_gpu, min_size=len(bus_ids), max_size=len(bus_ids))
    return st.builds(lambda g, v: _node(profile, bus_ids, g, v), gpus, values)


def numbered_node(bus_ids: list[str], profile: str = "mi300x_8gpu") -> Node:
    """One such node without hypothesis: the numbers 1, 2, 3..., caps 1, 2, 3 W, widths 1 and
    2, speeds PCIe 1.0 and 2.0."""
    gpus = [{"numbers": _numbers(profile), "caps_w": [1, 2, 3], "widths": [1, 2],
             "speeds": SPEEDS[:2]} for _ in bus_ids]  # fmt: skip
    n = len(bus_ids) * len(gpus[0]["numbers"])
    return _node(profile, bus_ids, gpus, list(range(1, n + 1)))


def _numbers(profile: str) -> list[Path]:
    blocks = [("ecc_blocks", b, k) for b in load_profile(profile)["device"]["ecc_blocks"]
              for k in ("correctable_count", "uncorrectable_count", "deferred_count")]  # fmt: skip
    return COUNTS + PCIE + TEMPERATURES + blocks


def _node(profile: str, bus_ids: list[str], gpus: list[dict], values: list[int]) -> Node:
    from rigcheck.testing.amdsmi_sim.profiles import node_from_profile

    node = node_from_profile(profile, bus_ids)
    values = iter(values)
    for device, drawn in zip(node.devices, gpus, strict=True):
        for path in drawn["numbers"]:
            put(device, path, next(values))
        for path, watts in zip(CAPS, drawn["caps_w"], strict=True):
            put(device, path, watts * 1_000_000)
        _link(device, drawn["widths"], drawn["speeds"])
    return node


def _link(device: dict[str, Any], widths: list[int], speeds: tuple[int, int]) -> None:
    """The link now and at most, written alike into ROCm 6.0's calls (link status and caps,
    the replay counter) and the later amdsmi_get_pcie_info."""
    (current_w, max_w), (current_s, max_s) = widths, speeds
    put(device, WIDTHS[0], current_w)
    put(device, WIDTHS[1], max_w)
    put(device, ("pcie", "pcie_metric", "pcie_speed"), current_s)
    put(device, ("pcie", "pcie_static", "max_pcie_speed"), max_s)
    device["pcie_link_status"] = {"pcie_lanes": current_w, "pcie_speed": current_s}
    device["pcie_link_caps"] = {"pcie_lanes": max_w, "pcie_speed": max_s}
    device["pci_replay_counter"] = device["pcie"]["pcie_metric"]["pcie_replay_count"]


def _pairs(paths: list[Path]) -> list[tuple[Path, Path]]:
    return [(a, b) for i, a in enumerate(paths) for b in paths[i + 1 :]]


# Fields of one GPU's profile that a probe reading the wrong one would confuse.
SWAPPABLE: list[tuple[Path, Path]] = [
    *_pairs(COUNTS), *_pairs(PCIE), *_pairs(TEMPERATURES), *_pairs(CAPS), (WIDTHS[0], WIDTHS[1]),
    (("pcie", "pcie_metric", "pcie_speed"), ("pcie", "pcie_static", "max_pcie_speed")),
]  # fmt: skip
