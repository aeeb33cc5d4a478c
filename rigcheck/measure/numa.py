"""Host memory for a GPU's copies, placed on the GPU's own NUMA node.

On a two-socket node a pinned buffer allocated from whatever CPU the test runs on lands on
that CPU's socket (Linux places a page where it is first touched, and cudaHostAlloc touches
its pages when it pins them). A copy between it and a GPU of the other socket then crosses
the inter-socket link, so the host-link spread check blamed the healthy GPUs of the far
socket. The buffer is therefore allocated and filled from a thread bound (sched_setaffinity)
to the CPUs of the GPU's NUMA node, taken from the topology facts, as nvbandwidth and
nccl-tests do by binding to the GPU's local CPUs; the placement is recorded with the figure.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from rigcheck.facts import Facts
from rigcheck.facts.nvidia.topology import parse_cpulist

T = TypeVar("T")


def gpu_numa_cpus(facts: Facts, device: dict[str, Any]) -> tuple[int | None, str | None]:
    """(NUMA node, its CPU list) of a GPU from the topology facts; (None, None) if unknown.

    The PCI device's NUMA node names the socket; its CPUs come from host_numa_cpus. Where
    the firmware gives no node (-1), NVML's CPU affinity for the GPU stands in.
    """
    topology = facts.find("topology", {})
    if not isinstance(topology, dict) or not isinstance(topology.get("gpus"), list):
        return None, None
    gpu = next(
        (
            g
            for g in topology["gpus"]
            if isinstance(g, dict) and g.get("index") == device.get("index")
        ),
        None,
    )
    if gpu is None:
        return None, None
    node, numa_cpus = gpu.get("numa_node"), topology.get("host_numa_cpus")
    if isinstance(node, int) and node >= 0 and isinstance(numa_cpus, dict):
        cpus = numa_cpus.get(str(node))
        if isinstance(cpus, str) and cpus:
            return node, cpus
    affinity = gpu.get("cpu_affinity")
    return (None, affinity) if isinstance(affinity, str) and affinity else (None, None)


def on_cpus(cpulist: str | None, make: Callable[[], T], node: int | None = None):
    """(make()'s result, where it ran): make() runs in a thread bound to these CPUs, so the
    memory it first touches is placed on their NUMA node. Unbound, and saying why, when the
    CPUs are unknown or the platform cannot bind."""
    if not cpulist:
        return make(), {"bound": False, "why": "no NUMA facts for this GPU (topology probe)"}
    if not hasattr(os, "sched_setaffinity"):
        return make(), {"bound": False, "why": "this platform has no sched_setaffinity"}
    try:
        cpus = set(parse_cpulist(cpulist)) & _usable_cpus()
    except ValueError:
        return make(), {"bound": False, "why": f"unreadable CPU list {cpulist!r} in the facts"}
    if not cpus:
        why = f"none of the GPU's CPUs {cpulist} are usable by this process (cgroup/taskset)"
        return make(), {"bound": False, "why": why}
    out: dict[str, Any] = {}

    def work() -> None:
        try:
            os.sched_setaffinity(0, cpus)  # this thread only: pid 0 is the calling thread
            out["value"] = make()
        except BaseException as exc:  # re-raised in the caller, with its own traceback
            out["error"] = exc

    thread = threading.Thread(target=work, name="rigcheck-numa-alloc")
    thread.start()
    thread.join()
    if "error" in out:
        raise out["error"]
    return out["value"], {"bound": True, "numa_node": node, "cpus": cpulist}


def _usable_cpus() -> set[int]:
    try:
        return set(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return set(range(os.cpu_count() or 1))
