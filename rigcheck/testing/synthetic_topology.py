"""Synthetic topology records: what the NVML and amdsmi topology probes report on a healthy node
(NUMA placement, each GPU's NVLinks and their far ends, each pair's PCIe path and P2P status)."""

from __future__ import annotations

from itertools import combinations
from typing import Any

from rigcheck.facts.nvidia.topology import format_cpulist, nvlink_between
from rigcheck.spec import Spec
from rigcheck.testing.synthetic_tables import (
    CUBE_MESH,
    HOSTS,
    NVSWITCH_BUS_IDS,
    Board,
    Host,
    bus_id,
)


def nvidia_topology(spec: Spec, board: Board, count: int) -> dict[str, Any]:
    """topology.probe_topology's record: each GPU's NUMA placement and links, each pair's path."""
    host = HOSTS[board.host]
    numa = _numa_cpus(host)
    gpus = [_topology_gpu(spec, board, host, numa, i, count) for i in range(count)]
    pairs = [
        _topology_pair(spec, board, host, gpus, a, b, count)
        for a, b in combinations(range(count), 2)
    ]
    return {"source": "nvml", "host_numa_cpus": numa, "gpus": gpus, "pairs": pairs}


def amd_topology(spec: Spec, board: Board, count: int) -> dict[str, Any]:
    """amd_topology.amd_topology's record: NUMA placement as on NVIDIA servers, and every pair one
    xGMI hop apart (MI300X's fully connected Infinity Fabric: 7 links, one to each peer)."""
    host = HOSTS[board.host]
    numa = _numa_cpus(host)
    gpus = [_topology_gpu(spec, board, host, numa, i, count) for i in range(count)]
    for gpu in gpus:
        del gpu["nvlink"]  # NVML's; amdsmi's links are per pair
    pairs = [
        {"gpus": [a, b], "link": {"type": "xgmi", "hops": 1}, "p2p": {"accessible": True}}
        for a, b in combinations(range(count), 2)
    ]
    return {"source": "amdsmi", "host_numa_cpus": numa, "gpus": gpus, "pairs": pairs}


def _numa_cpus(host: Host) -> dict[str, str]:
    """Each socket's cores and their SMT siblings, as the kernel lists a node's CPUs."""
    physical, logical = host.cores
    per = physical // host.sockets
    smt = logical // physical
    return {
        str(s): format_cpulist(
            [c + t * physical for t in range(smt) for c in range(s * per, (s + 1) * per)]
        )
        for s in range(host.sockets)
    }


def socket_of(host: Host, index: int, count: int) -> int:
    """GPUs split evenly across sockets: 0-3 on socket 0 and 4-7 on socket 1 of a 2-socket node."""
    return index * host.sockets // count


def _topology_gpu(
    spec: Spec, board: Board, host: Host, numa: dict[str, str], index: int, count: int
) -> dict[str, Any]:
    socket = socket_of(host, index, count)
    return {
        "index": index,
        "bus_id": bus_id(index),
        # A VM's firmware gives its PCI devices no NUMA node: sysfs says -1.
        "numa_node": -1 if host.virtualization != "none" else socket,
        "cpu_affinity": numa[str(socket)],
        "cpu_numa_nodes": [socket],
        "nvlink": _far_ends(spec, board, index, count),
    }


def _far_ends(spec: Spec, board: Board, index: int, count: int) -> list[dict[str, Any]]:
    """Each NVLink and its far end: an NVSwitch on HGX boards, a peer GPU in DGX-1's mesh."""
    link = spec.expect("gpu_link")
    if link["type"] != "nvlink":
        return []
    if board.nvlink_fabric == "cube_mesh":
        peers = [peer for peer, n in _cube_mesh_peers(index) for _ in range(n)]
        return [
            {
                "link": i,
                "active": True,
                "remote": "gpu",
                "remote_bus_id": bus_id(peer),
                "remote_gpu": peer if peer < count else None,
            }
            for i, peer in enumerate(peers)
        ]
    return [
        {
            "link": i,
            "active": True,
            "remote": "switch",
            "remote_bus_id": NVSWITCH_BUS_IDS[i % len(NVSWITCH_BUS_IDS)],
            "remote_gpu": None,
        }
        for i in range(link["links_per_device"])
    ]


def _cube_mesh_peers(index: int) -> list[tuple[int, int]]:
    """(peer, links) for one GPU of DGX-1's hybrid cube-mesh, by peer."""
    joined = []
    for (a, b), links in CUBE_MESH.items():
        if index in (a, b):
            joined.append((b if index == a else a, links))
    return sorted(joined)


def _topology_pair(
    spec: Spec, board: Board, host: Host, gpus: list[dict[str, Any]], a: int, b: int, count: int
) -> dict[str, Any]:
    nvlink = nvlink_between(gpus[a], gpus[b])
    p2p = "ok" if nvlink["links"] or board.pcie_p2p else "gpu_not_supported"
    return {
        "gpus": [a, b],
        "pcie_path": _pcie_path(spec, host, a, b, count),
        "nvlink": nvlink,
        "p2p": {
            "read": p2p,
            "write": p2p,
            "nvlink": "ok" if nvlink["links"] else "not_supported",
            "atomics": "ok" if nvlink["links"] else "not_supported",
        },
    }


def _pcie_path(spec: Spec, host: Host, a: int, b: int, count: int) -> str:
    """PCIe servers pair GPUs under one switch; SXM GPUs each have their own switch."""
    if socket_of(host, a, count) != socket_of(host, b, count):
        return "SYS"
    shares_switch = spec.expect("gpu_link")["type"] != "nvlink" and a // 2 == b // 2
    return "PIX" if shares_switch else "NODE"
