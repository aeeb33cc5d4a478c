"""Synthetic multi-GPU nodes for replay: facts (with topology) and a torchrun job's results.

Written from reference figures, not read from machines (fixtures/distributed/README.md says
which is which). Each scenario is a healthy node or one defect; the data goes to
fixtures/distributed/<scenario>/{facts,collectives}.json and test_dist_fixtures_match_generator
keeps the files and this module in step:

    python tests/distributed/dist_scenarios.py --write
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from rigcheck.distributed.measure import BUSBW_FACTOR
from rigcheck.distributed.results import BUNDLE_SCHEMA
from rigcheck.facts.fabric.nccl_env import nccl_environment, nvls_state
from rigcheck.facts.nvidia.topology import PCIE_PATHS, nodes_of_cpus, nvlink_between, parse_cpulist

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "distributed"
GIB, MIB = 2**30, 2**20
NOTE = (
    "synthetic: written by tests/distributed/dist_scenarios.py, not read from a machine. H100 "
    "figures after public reports: ~480 GB/s all-reduce with NVLS "
    "(https://github.com/NVIDIA/nccl-tests/issues/212), ~380 GB/s P2P per pair "
    "(https://github.com/NVIDIA/nccl/issues/1264); L40S figures written by hand within PCIe "
    "Gen4's 31.5 GB/s per direction (no public 8x L40S reference)"
)
BUS_IDS = [f"0000:{bus}:00.0" for bus in ("18", "2a", "3a", "5d", "9a", "ab", "ba", "db")]
NVSWITCH_BUS_IDS = [f"0000:{bus}:00.0" for bus in ("05", "06", "07", "08")]
T0 = 1795300000.0  # a fixed clock, so the files do not change between generations
# The seed's "NCCL tuning for PCIe topology" settings for its 8x L40S node.
SEED_L40S_ENV = {
    "NCCL_P2P_DISABLE": "0",
    "NCCL_IB_DISABLE": "1",
    "NCCL_SOCKET_IFNAME": "eth0",
    "NCCL_DEBUG": "WARN",
    "NCCL_ALGO": "Ring",
    "NCCL_BUFFSIZE": "16777216",
}


@dataclass
class Node:
    """One 8-GPU server as NVML and the kernel describe it."""

    cls: str
    host: str
    gpu_name: str
    pci_device_id: str
    memory_mib: int
    nvlinks: int  # per GPU, all into NVSwitch; 0: PCIe only
    numa_cpus: dict[str, str]
    same_socket_path: str  # PCIe common ancestor of two GPUs on one socket
    cpu: str
    interfaces: list[str] = field(default_factory=lambda: ["eth0", "lo"])
    gpu_node: list[int] = field(default_factory=lambda: [0, 0, 0, 0, 1, 1, 1, 1])
    affinity_node: list[int] = field(default_factory=lambda: [0, 0, 0, 0, 1, 1, 1, 1])
    links_down: set[tuple[int, int]] = field(default_factory=set)  # (gpu, link)
    p2p_status: str = "ok"  # on pairs below the CPU (or every pair on NVLink)


def h100_node() -> Node:
    return Node(
        cls="h100",
        host="hgx-h100-01",
        gpu_name="NVIDIA H100 80GB HBM3",
        pci_device_id="0x2330",
        memory_mib=81559,
        nvlinks=18,
        numa_cpus={"0": "0-55,112-167", "1": "56-111,168-223"},
        same_socket_path="NODE",
        cpu="Intel(R) Xeon(R) Platinum 8480+",
    )


def l40s_node() -> Node:
    return Node(
        cls="l40s",
        host="l40s-node-01",
        gpu_name="NVIDIA L40S",
        pci_device_id="0x26B9",
        memory_mib=46068,
        nvlinks=0,
        numa_cpus={"0": "0-31,64-95", "1": "32-63,96-127"},
        same_socket_path="PIX",  # four GPUs behind one PCIe switch per socket
        cpu="Intel(R) Xeon(R) Gold 6448Y",
    )


# ---- facts ----


def topology(node: Node) -> dict[str, Any]:
    """What rigcheck/facts/nvidia/topology.py would read on this node."""
    gpus = [_gpu(node, i) for i in range(8)]
    for gpu in gpus:
        for link in gpu["nvlink"]:
            link["remote_gpu"] = None  # every link ends at an NVSwitch
    pairs = [_pair(node, gpus, a, b) for a, b in combinations(range(8), 2)]
    return {"source": "nvml", "host_numa_cpus": node.numa_cpus, "gpus": gpus, "pairs": pairs}


def _gpu(node: Node, i: int) -> dict[str, Any]:
    affinity = node.numa_cpus[str(node.affinity_node[i])]
    return {
        "index": i,
        "bus_id": BUS_IDS[i],
        "numa_node": node.gpu_node[i],
        "cpu_affinity": affinity,
        "cpu_numa_nodes": nodes_of_cpus(parse_cpulist(affinity), node.numa_cpus),
        "nvlink": [_link(node, i, link) for link in range(node.nvlinks)],
    }


def _link(node: Node, gpu: int, link: int) -> dict[str, Any]:
    if (gpu, link) in node.links_down:
        return {"link": link, "active": False}
    remote = NVSWITCH_BUS_IDS[link % len(NVSWITCH_BUS_IDS)]
    return {"link": link, "active": True, "remote": "switch", "remote_bus_id": remote}


def _pair(node: Node, gpus, a: int, b: int) -> dict[str, Any]:
    same_socket = node.affinity_node[a] == node.affinity_node[b]
    path = node.same_socket_path if same_socket else "SYS"
    below_cpu = node.nvlinks or path in ("PIX", "PXB")
    status = node.p2p_status if below_cpu else "ok"
    return {
        "gpus": [a, b],
        "pcie_path": path,
        "nvlink": nvlink_between(gpus[a], gpus[b]),
        "p2p": {
            "read": status,
            "write": status,
            "nvlink": "ok" if node.nvlinks else "not_supported",
            "atomics": status if node.nvlinks else "not_supported",
        },
    }


def facts(node: Node) -> dict[str, Any]:
    """A facts snapshot: just the facts the distributed checks and the class identity read."""
    assert set(PCIE_PATHS.values()) >= {node.same_socket_path, "SYS"}
    cpus = sum(len(parse_cpulist(c)) for c in node.numa_cpus.values())
    return {
        "schema_version": 1,
        "origin": {"kind": "synthetic", "note": NOTE},
        "host": {
            "os": "Linux",
            "hostname": node.host,
            "machine": "x86_64",
            "cpu": {"model": node.cpu, "cores_logical": cpus},
            "memory_total_bytes": 2048 * GIB,
        },
        "software": {
            "torch": {"version": "2.5.1+cu124", "build": "cuda", "cuda_version": "12.4"},
            "nvidia_driver": {"present": True, "version": "550.127.05"},
        },
        "devices": [
            {
                "index": i,
                "vendor": "nvidia",
                "name": node.gpu_name,
                "pci": {
                    "bus_id": BUS_IDS[i],
                    "device_id": node.pci_device_id,
                    "vendor_id": "0x10DE",
                },
                "memory_total_bytes": node.memory_mib * MIB,
                "numa_node": node.gpu_node[i],
            }
            for i in range(8)
        ],
        "topology": topology(node),
    }


# ---- collectives ----


@dataclass
class Job:
    """What an 8-rank torchrun job measured on a node."""

    busbw: float  # all-reduce, GB/s
    unidir: float  # peer copy, GB/s, pairs below the CPU (every pair on NVLink)
    unidir_far: float | None = None  # pairs across sockets (PCIe nodes)
    env: dict[str, str] = field(default_factory=dict)
    nccl_log: dict[str, Any] | None = None
    peer_access: bool = True
    slow_pairs: dict[tuple[int, int], float] = field(default_factory=dict)
    hang: int | None = None  # the rank that stopped answering mid all-reduce


def collectives(node: Node, job: Job) -> dict[str, Any]:
    ranks = [] if job.hang is not None else [_rank(node, job, r) for r in range(8)]
    if ranks:
        ranks[0]["p2p"] = _p2p(node, job)
    return {
        "schema": BUNDLE_SCHEMA,
        "origin": {"kind": "synthetic", "note": NOTE},
        "launch": _launch(job),
        "ranks": ranks,
        "progress": [_progress(node, job, r) for r in range(8)],
    }


def _nccl(job: Job) -> dict[str, Any]:
    nccl = nccl_environment(job.env, Path("/nonexistent"))
    used, why = nvls_state("nccl", nccl["effective"], job.nccl_log)
    nccl["rigcheck_set"] = {} if "NCCL_DEBUG" in job.env else {"NCCL_DEBUG": "INFO"}
    nccl.update(version="2.21.5", log=job.nccl_log, nvls={"used": used, "why": why})
    return nccl


def _rank(node: Node, job: Job, r: int) -> dict[str, Any]:
    return {
        "schema": "rigcheck.collectives/1",
        **_identity(node, r),
        "pid": 41000 + r,
        "started_at": "2026-11-20T09:00:00+00:00",
        "interfaces": node.interfaces,
        "device": {
            "kind": "cuda",
            "index": r,
            "name": node.gpu_name,
            "bus_id": BUS_IDS[r],
            "visible_devices": 8,
            "peer_access": {str(j): job.peer_access for j in range(8) if j != r},
        },
        "backend": "nccl",
        "torch_version": "2.5.1+cu124",
        "settings": {"bytes": 8 * GIB, "check_bytes": 64 * MIB},
        "nccl": _nccl(job),
        "init": {"ok": True, "seconds": 2.41},
        "allreduce_check": {"ok": True, "elements": 16 * MIB, "wrong": 0},
        "allreduce": _timed("allreduce", job.busbw),
        "allgather": _timed("allgather", job.busbw * 0.75),
        "reducescatter": _timed("reducescatter", job.busbw * 0.75),
        "finished_at": "2026-11-20T09:01:10+00:00",
    }


def _timed(op: str, busbw: float, world: int = 8, nbytes: int = 8 * GIB) -> dict[str, Any]:
    algbw = busbw / BUSBW_FACTOR[op](world)
    median = nbytes / (algbw * 1e9)
    times = [round(median * f, 6) for f in (1.004, 0.998, 1.0, 1.011, 0.997)]
    median = statistics.median(times)
    return {
        "bytes": nbytes,
        "dtype": "float32",
        "iters": 5,
        "warmup": 2,
        "times_s": times,
        "median_s": median,
        "algbw_gbps": nbytes / median / 1e9,
        "busbw_gbps": nbytes / median / 1e9 * BUSBW_FACTOR[op](world),
        "verified": True,
    }


def _p2p(node: Node, job: Job) -> dict[str, Any]:
    pairs = []
    for a, b in combinations(range(8), 2):
        near = node.nvlinks or node.affinity_node[a] == node.affinity_node[b]
        rate = job.slow_pairs.get((a, b), job.unidir if near else job.unidir_far)
        pairs.append(
            {
                "gpus": [a, b],
                "peer_access": {"a_to_b": job.peer_access, "b_to_a": job.peer_access},
                "unidir_gbps": {"a_to_b": rate, "b_to_a": round(rate * 1.004, 2)},
                "bidir_gbps": round(rate * 1.97, 2),
                "verified": True,
            }
        )
    devices = [{"index": i, "name": node.gpu_name, "bus_id": BUS_IDS[i]} for i in range(8)]
    return {"bytes": 512 * MIB, "iters": 5, "warmup": 2, "devices": devices, "pairs": pairs}


def _identity(node: Node, r: int) -> dict[str, Any]:
    return {
        "host": node.host,
        "rank": r,
        "world_size": 8,
        "local_rank": r,
        "local_world_size": 8,
        "node_rank": 0,
    }


def _progress(node: Node, job: Job, r: int) -> dict[str, Any]:
    entry = {**_identity(node, r), "pid": 41000 + r, "device": {"kind": "cuda", "index": r}}
    entry["in_collective"] = job.hang is not None  # a hang: every rank inside the all-reduce
    if job.hang is None:
        return {**entry, "stage": "done", "stage_index": 9, "detail": "", **_times(70, 70)}
    if r == job.hang:  # its GPU stopped mid-iteration; the driver call never returned
        detail = "iteration 3/7, 8589934592 bytes"
        return {
            **entry,
            "stage": "allreduce",
            "stage_index": 3,
            "detail": detail,
            **_times(95, 121),
        }
    detail = "iteration 3/7, 8589934592 bytes"
    return {**entry, "stage": "allreduce", "stage_index": 3, "detail": detail, **_times(95, 599)}


def _times(stage_started: float, heartbeat: float) -> dict[str, float]:
    return {"stage_started_at": T0 + stage_started, "heartbeat_at": T0 + heartbeat}


def _launch(job: Job) -> dict[str, Any]:
    hung = job.hang is not None
    return {
        "argv": ["python", "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=8"],
        "returncode": -15 if hung else 0,
        "timed_out": hung,
        "timeout_s": 600.0,
        "started_at": T0,
        "stopped_at": T0 + 600 if hung else None,
        "seconds": 600.0 if hung else 71.0,
        "log": "torchrun.log",
        "log_tail": "",
    }


# ---- the scenarios ----

H100_LOG = {"version": "2.21.5+cuda12.4", "nvls_available": True, "nvls_channels": 16}


def h100_job(**changes) -> Job:
    """8x H100 SXM: ~480 GB/s all-reduce with NVLS (NVIDIA/nccl-tests#212), ~380 GB/s
    unidirectional P2P per pair (NVIDIA/nccl#1264, p2pBandwidthLatencyTest on HGX H100)."""
    return Job(busbw=478.0, unidir=382.0, nccl_log=H100_LOG, **changes)


def l40s_job(**changes) -> Job:
    """8x L40S on PCIe Gen4: made-up but plausible figures (no public reference): ~26 GB/s
    between GPUs behind one switch, ~22 across sockets (nvbandwidth on PCIe Gen4 GPUs,
    NVIDIA/nvbandwidth#50), ring all-reduce ~18 GB/s bus bandwidth."""
    options = {"busbw": 18.4, "unidir": 25.8, "unidir_far": 21.6, "env": dict(SEED_L40S_ENV)}
    options.update(changes)
    return Job(**options)


def scenarios() -> dict[str, tuple[Node, Job, str]]:
    """name -> (node, job, what is wrong with it)."""
    h100, l40s = h100_node(), l40s_node()
    down = copy.deepcopy(h100)
    down.links_down = {(3, 7)}
    wrong_numa = copy.deepcopy(h100)
    wrong_numa.gpu_node = [0, 0, 0, 0, 1, 0, 1, 1]  # GPU 5's PCI device says node 0
    acs = copy.deepcopy(l40s)
    acs.p2p_status = "chipset_not_supported"
    unbalanced = copy.deepcopy(l40s)
    unbalanced.gpu_node = unbalanced.affinity_node = [0, 0, 0, 0, 0, 1, 1, 1]
    moved_env = copy.deepcopy(l40s)
    moved_env.interfaces = ["ens5", "lo"]
    return {
        "h100_8x_nvswitch": (h100, h100_job(), "healthy HGX H100: NV18 pairs, NVLS"),
        "l40s_8x_pcie": (l40s, l40s_job(), "healthy 8x L40S, PCIe switch per socket, seed env"),
        "h100_nvlink_down": (down, h100_job(), "GPU 3 has one of its 18 NVLinks down"),
        "l40s_p2p_disabled": (
            acs,
            l40s_job(busbw=9.1, unidir=11.2, unidir_far=10.9, peer_access=False),
            "ACS on the PCIe switches: no P2P, copies staged through host memory",
        ),
        "h100_slow_pair": (
            h100,
            h100_job(slow_pairs={(3, 5): 150.0}),
            "GPU 3 <-> GPU 5 copies at 150 GB/s, the others ~380",
        ),
        "h100_wrong_numa": (
            wrong_numa,
            h100_job(),
            "GPU 5's PCI device reports NUMA node 0; its CPU affinity is node 1's",
        ),
        "l40s_unbalanced_numa": (unbalanced, l40s_job(), "5 GPUs on socket 0, 3 on socket 1"),
        "l40s_nccl_env_broken": (
            moved_env,
            l40s_job(env={**SEED_L40S_ENV, "NCCL_P2P_DISABLE": "1"}),
            "NCCL_P2P_DISABLE=1, and the seed's NCCL_SOCKET_IFNAME=eth0 on a host with ens5",
        ),
        "h100_rank_hang": (h100, h100_job(hang=5), "rank 5 stops answering mid all-reduce"),
    }


def render(name: str) -> dict[str, str]:
    """The scenario's files, as they are written."""
    node, job, _ = scenarios()[name]
    return {
        "facts.json": json.dumps(facts(node), indent=1) + "\n",
        "collectives.json": json.dumps(collectives(node, job), indent=1) + "\n",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true", help=f"write the files under {FIXTURES}")
    args = parser.parse_args(argv)
    for name, (_, _, what) in scenarios().items():
        print(f"{name}: {what}")
        if args.write:
            for file, text in render(name).items():
                (FIXTURES / name).mkdir(parents=True, exist_ok=True)
                (FIXTURES / name / file).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
