"""The host-limit probe pinned to the process's own limits, not the host's (tests/mutation/
realistic/fabric_host.toml): CPUs this process may run on (sched_getaffinity: taskset, a cpuset
cgroup) rather than the CPUs the host has; the soft memlock limit a process gets rather than the
hard ceiling it could raise it to; a cgroup quota over its own period."""

from __future__ import annotations

import os
import resource

import pytest

from rigcheck.facts.host import limits as host_limits


def test_cpus_usable_are_the_affinity_not_the_hosts_count(monkeypatch):
    """A Slurm job given 3 CPUs of a 96-CPU host: os.cpu_count() says 96, the job gets 3."""
    if not hasattr(os, "sched_getaffinity"):
        pytest.skip("no sched_getaffinity on this OS (not Linux): the probe counts the host")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {4, 5, 6})
    monkeypatch.setattr(os, "cpu_count", lambda: 96)
    assert host_limits.probe_host_limits()["cpus_usable"] == 3


INF = resource.RLIM_INFINITY


@pytest.mark.parametrize(
    ("soft", "hard", "unlimited", "soft_bytes"),
    [
        (64 * 2**10, INF, False, 64 * 2**10),  # Docker's default: 64 KiB soft, unlimited hard
        (INF, INF, True, None),
        (8 * 2**20, 8 * 2**20, False, 8 * 2**20),
    ],
)
def test_memlock_is_judged_by_the_soft_limit_a_process_gets(
    monkeypatch, soft, hard, unlimited, soft_bytes
):
    monkeypatch.setattr(resource, "getrlimit", lambda which: (soft, hard))
    memlock = host_limits.probe_host_limits()["memlock"]
    assert (memlock["unlimited"], memlock["soft_bytes"]) == (unlimited, soft_bytes)


@pytest.mark.parametrize(
    ("cpu_max", "cpus"), [("150000 50000", 3.0), ("50000 100000", 0.5), ("200000", 2.0)]
)
def test_a_cgroup_quota_is_read_over_its_own_period(tmp_path, cpu_max, cpus):
    """cgroup v2 cpu.max is "$MAX $PERIOD"; the period defaults to 100000 us when absent."""
    (tmp_path / "sys/fs/cgroup").mkdir(parents=True)
    (tmp_path / "sys/fs/cgroup/cpu.max").write_text(cpu_max + "\n")
    assert host_limits.probe_host_limits(tmp_path)["cgroup_cpu_limit"] == cpus


def test_shm_is_its_size_not_what_is_free_on_it(monkeypatch, tmp_path):
    """Docker's --shm-size sets the size; what other processes left free is not the limit."""
    (tmp_path / "dev/shm").mkdir(parents=True)
    stat = os.statvfs_result((4096, 4096, 2**18, 10, 10, 0, 0, 0, 0, 255))  # 1 GiB, 40 KiB free
    monkeypatch.setattr(os, "statvfs", lambda path: stat)
    assert host_limits.probe_host_limits(tmp_path)["shm_bytes"] == 2**30


@pytest.mark.parametrize("text", ["", "unlimited", "9.5G"])
def test_a_memory_max_that_is_neither_a_number_nor_max_is_an_error_not_no_limit(tmp_path, text):
    (tmp_path / "sys/fs/cgroup").mkdir(parents=True)
    (tmp_path / "sys/fs/cgroup/memory.max").write_text(text + "\n")
    found = host_limits.probe_host_limits(tmp_path)["cgroup_memory_bytes"]
    assert isinstance(found, dict) and "error" in found, found


def test_every_iommu_boot_flag_is_kept_for_the_check(tmp_path):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/cmdline").write_text("ro amd_iommu=off intel_iommu=on iommu=pt quiet\n")
    flags = host_limits.probe_host_limits(tmp_path)["iommu"]["cmdline"]
    assert flags == ["amd_iommu=off", "intel_iommu=on", "iommu=pt"]
