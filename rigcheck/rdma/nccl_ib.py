"""Will NCCL use the RDMA fabric, and use it well? Judged from the fabric facts before any job.

Rules, from NCCL's documentation ("Environment Variables") and source:
- NCCL_IB_HCA: comma-separated `name[:port]` tokens, prefixes unless the list starts with `=`
  (exact names); a leading `^` excludes them instead.
- NCCL_NET_GDR_LEVEL: GPUDirect RDMA is used between a GPU and a NIC at most this far apart:
  LOC < PIX < PXB < PHB < SYS (integers 0-4 the same, 5 also SYS); unset, NCCL uses PXB
  (src/graph/paths.cc, ncclTopoCheckGdr: `netGdrLevel = PATH_PXB`).
- RoCE: NCCL_IB_GID_INDEX unset (-1) lets NCCL pick a RoCE v2 GID (NCCL_IB_ROCE_VERSION_NUM,
  default 2); set, it must name such a GID on every port. The RDMA path MTU is the largest IB
  MTU (256-4096) that fits in the net device's MTU, so a 1500-byte net device caps RDMA packets
  at 1024 bytes: MIN_ROCE_MTU lets a 4096-byte payload and the RoCE v2 headers (IP 20, UDP 8,
  BTH 12, RETH 16, ICRC 4 bytes) through.
"""

from __future__ import annotations

from typing import Any

from rigcheck.facts.fabric.nccl_env import socket_ifname_matches
from rigcheck.number_text import is_whole

LEVELS = ("LOC", "PIX", "PXB", "PHB", "SYS")
DEFAULT_GDR_LEVEL = "PXB"
MIN_ROCE_MTU = 4200


def hca_selected(value: str, ports: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """The (device, port) pairs NCCL_IB_HCA lets NCCL use."""
    exclude = value.startswith("^")
    rest = value[1:] if exclude else value
    exact = rest.startswith("=")
    tokens = [t.strip() for t in (rest[1:] if exact else rest).split(",") if t.strip()]

    def listed(device: str, port: int) -> bool:
        for token in tokens:
            name, _, want = token.partition(":")
            named = device == name if exact else device.startswith(name)
            if named and (not want or want == str(port)):
                return True
        return False

    return [p for p in ports if listed(*p) != exclude]


def hca_problems(value: str, ports: list[tuple[str, int]], wanted: float) -> list[str]:
    """What is wrong with NCCL_IB_HCA on these ports (counted NICs), wanting `wanted` of them."""
    chosen = hca_selected(value, ports)
    names = ", ".join(f"{d}:{p}" for d, p in ports) or "none"
    problems = []
    if not value.startswith("^"):
        rest = value.lstrip("=")
        for token in (t.strip() for t in rest.split(",") if t.strip()):
            if not hca_selected(("=" if value.startswith("=") else "") + token, ports):
                problems.append(f"NCCL_IB_HCA={value}: {token} matches no port (found {names})")
    if len(chosen) < wanted:
        used = ", ".join(f"{d}:{p}" for d, p in chosen) or "none"
        problems.append(
            f"NCCL_IB_HCA={value} lets NCCL use {len(chosen)} of the {wanted:g} expected ports "
            f"({used}; found {names})"
        )
    return problems


def socket_problems(value: str, interfaces: dict[str, Any]) -> list[str]:
    """NCCL_SOCKET_IFNAME must select an interface that exists and is up."""
    chosen = socket_ifname_matches(value, sorted(interfaces))
    if not chosen:
        return [f"NCCL_SOCKET_IFNAME={value} matches none of {', '.join(sorted(interfaces))}"]
    up = [i for i in chosen if interfaces[i].get("operstate") in ("up", "unknown")]
    if not up:
        return [f"NCCL_SOCKET_IFNAME={value} selects {', '.join(chosen)}, none of them up"]
    return []


def gdr_level(value: str | None) -> str:
    """NCCL_NET_GDR_LEVEL as a level name; ValueError for what NCCL would not accept."""
    if value is None or value == "":
        return DEFAULT_GDR_LEVEL
    text = value.strip().upper()
    if text in LEVELS:
        return text
    if is_whole(text) and int(text) <= 5:  # NCCL's strtol reads 0-9 only
        return LEVELS[min(int(text), 4)]
    raise ValueError(f"NCCL_NET_GDR_LEVEL={value} is none of {', '.join(LEVELS)} or 0-5")


def pcie_distance(gpu: dict[str, Any], nic: dict[str, Any]) -> str:
    """NCCL's path type between two PCI places: PIX (one switch), PXB (several bridges below
    one root port), PHB (through the CPU's host bridge), SYS (across NUMA nodes)."""
    shared = 0
    for a, b in zip(gpu["bridges"], nic["bridges"], strict=False):
        if a != b:
            break
        shared += 1
    if shared >= 1:
        below = max(len(gpu["bridges"]), len(nic["bridges"])) - shared
        return "PIX" if shared >= 2 and below <= 1 else "PXB"
    return "PHB" if gpu["numa_node"] == nic["numa_node"] else "SYS"


def gdr_problems(level: str, gpus: list[tuple[Any, dict]], nics: list[tuple[str, dict]]) -> list:
    """Each GPU whose nearest NIC is farther than the level NCCL uses GPUDirect RDMA up to."""
    problems = []
    for index, place in gpus:
        if not nics:
            return ["no RDMA NIC to reach"]
        name, distance = min(
            ((n, pcie_distance(place, p)) for n, p in nics), key=lambda x: LEVELS.index(x[1])
        )
        if LEVELS.index(distance) > LEVELS.index(level):
            problems.append(f"GPU {index}: nearest NIC {name} is {distance} away")
    return problems


def roce_problems(port: str, port_facts: dict, settings: dict, interfaces: dict, spec: dict):
    """MTU and GID of one RoCE port NCCL will use."""
    gids = port_facts["gids"]
    v2 = [g for g in gids if g["type"] == "RoCE v2"]
    problems = []
    index = settings.get("NCCL_IB_GID_INDEX")
    if index not in (None, "", "-1"):
        match = [g for g in gids if str(g["index"]) == index.strip()]
        if not match:
            problems.append(f"{port}: NCCL_IB_GID_INDEX={index} is not a GID of this port")
        elif match[0]["type"] != "RoCE v2" and settings.get("NCCL_IB_ROCE_VERSION_NUM") != "1":
            problems.append(f"{port}: NCCL_IB_GID_INDEX={index} is a {match[0]['type']} GID")
    elif not v2:
        problems.append(f"{port}: no RoCE v2 GID (no IP address on its net device?)")
    netdev = (v2 or gids or [{}])[0].get("netdev")
    floor = spec.get("min_mtu", MIN_ROCE_MTU)
    mtu = interfaces.get(netdev, {}).get("mtu") if isinstance(netdev, str) else None
    if not isinstance(mtu, int):
        problems.append(f"{port}: the MTU of its net device ({netdev}) could not be read")
    elif mtu < floor:
        problems.append(f"{port}: {netdev} MTU {mtu}, below {floor}")
    return problems


def tc_problems(settings: dict, spec: dict) -> list[str]:
    value = settings.get("NCCL_IB_TC")
    wanted = spec.get("traffic_class")
    if value is not None and not (is_whole(value.strip()) and int(value) <= 255):
        return [f"NCCL_IB_TC={value} is not a traffic class (0-255)"]
    if wanted is not None and (value is None or int(value) != wanted):
        shown = "unset" if value is None else value
        return [f"NCCL_IB_TC={shown}, the site's traffic class is {wanted}"]
    return []
