"""Host limits that break ML jobs while the hardware is fine: /dev/shm, memlock, cgroups, IOMMU.

Each field is read on its own (a value or an error record): Docker's 64 MB /dev/shm kills
DataLoader workers and NCCL's shared-memory transport, a small locked-memory ulimit stops RDMA
registration, a cgroup quota hides CPUs and memory that psutil still reports for the host, and an
IOMMU in translation mode can block or slow GPU peer-to-peer traffic.
"""

from __future__ import annotations

import os
import resource
from pathlib import Path
from typing import Any

from rigcheck.facts.probe import error_record, guarded

IOMMU_FLAGS = ("iommu=", "iommu.", "intel_iommu=", "amd_iommu=")


def probe_host_limits(root: Path = Path("/")) -> dict[str, Any]:
    """Every host limit a check judges; `root` lets tests point it at a fake /proc and /sys."""
    return {
        "shm_bytes": guarded(lambda: _shm_bytes(root / "dev/shm")),
        "memlock": guarded(_memlock),
        "cpus_usable": guarded(_cpus_usable),
        "cgroup_cpu_limit": guarded(lambda: _cgroup_cpus(root / "sys/fs/cgroup/cpu.max")),
        "cgroup_memory_bytes": guarded(lambda: _cgroup_memory(root / "sys/fs/cgroup/memory.max")),
        "swap_bytes": guarded(_swap_bytes),
        "iommu": guarded(lambda: _iommu(root)),
        "rdma_devices": guarded(lambda: _rdma_devices(root / "sys/class/infiniband")),
    }


def _shm_bytes(path: Path) -> int:
    if not path.is_dir():
        raise FileNotFoundError(f"{path} does not exist (not Linux, or not mounted)")
    stat = os.statvfs(path)
    return stat.f_blocks * stat.f_frsize


def _memlock() -> dict[str, Any]:
    """The soft limit is what a process gets; None in *_bytes means unlimited."""
    soft, hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)

    def size(value: int) -> int | None:
        return None if value == resource.RLIM_INFINITY else value

    return {
        "unlimited": soft == resource.RLIM_INFINITY,
        "soft_bytes": size(soft),
        "hard_bytes": size(hard),
    }


def _cpus_usable() -> int:
    """CPUs this process may run on (taskset, cpuset cgroup), not the host's count."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 0


def _cgroup_cpus(path: Path) -> float | None:
    """cgroup v2 cpu.max "200000 100000" -> 2.0 CPUs; "max ..." or no file -> None (no limit)."""
    if not path.exists():
        return None
    quota, _, period = path.read_text().strip().partition(" ")
    return None if quota == "max" else round(int(quota) / int(period or 100000), 2)


def _cgroup_memory(path: Path) -> int | None:
    """cgroup v2 memory.max in bytes; "max" or no file -> None (no limit)."""
    if not path.exists():
        return None
    text = path.read_text().strip()
    return None if text == "max" else int(text)


def _swap_bytes() -> int:
    import psutil  # imported where used so a broken install is one probe's error

    return psutil.swap_memory().total


def _iommu(root: Path) -> dict[str, Any]:
    """IOMMU groups the kernel made, and the boot flags that set its mode (iommu=pt...)."""
    groups_dir = root / "sys/kernel/iommu_groups"
    if not (root / "proc/cmdline").exists():
        return error_record("/proc/cmdline is not readable here (not Linux?)")
    cmdline = (root / "proc/cmdline").read_text().split()
    return {
        "groups": len(list(groups_dir.iterdir())) if groups_dir.is_dir() else 0,
        "cmdline": [flag for flag in cmdline if flag.startswith(IOMMU_FLAGS)],
    }


def _rdma_devices(path: Path) -> int:
    """InfiniBand / RoCE devices: where NCCL registers memory and memlock matters."""
    return len(list(path.iterdir())) if path.is_dir() else 0
