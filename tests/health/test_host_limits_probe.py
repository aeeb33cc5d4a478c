"""The host-limits probe on a fake /proc and /sys: values where they are, an error record or
None ("no limit") where they are not, never an exception."""

from rigcheck.facts.host import limits as host_limits


def test_cgroup_limits_and_iommu_flags(tmp_path):
    (tmp_path / "sys/fs/cgroup").mkdir(parents=True)
    (tmp_path / "sys/fs/cgroup/cpu.max").write_text("400000 100000\n")
    (tmp_path / "sys/fs/cgroup/memory.max").write_text("68719476736\n")
    (tmp_path / "sys/kernel/iommu_groups/0").mkdir(parents=True)
    (tmp_path / "sys/class/infiniband/mlx5_0").mkdir(parents=True)
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/cmdline").write_text(
        "BOOT_IMAGE=/vmlinuz ro intel_iommu=on iommu=pt iommu.passthrough=1 quiet\n"
    )
    limits = host_limits.probe_host_limits(tmp_path)
    assert limits["cgroup_cpu_limit"] == 4.0
    assert limits["cgroup_memory_bytes"] == 64 * 2**30
    flags = ["intel_iommu=on", "iommu=pt", "iommu.passthrough=1"]
    assert limits["iommu"] == {"groups": 1, "cmdline": flags}
    assert limits["rdma_devices"] == 1


def test_no_cgroup_files_mean_no_limit_and_missing_mounts_are_errors(tmp_path):
    limits = host_limits.probe_host_limits(tmp_path)
    assert limits["cgroup_cpu_limit"] is None and limits["cgroup_memory_bytes"] is None
    assert "does not exist" in limits["shm_bytes"]["error"]
    assert "not readable" in limits["iommu"]["error"]
    assert limits["rdma_devices"] == 0


def test_unlimited_cgroup_values(tmp_path):
    (tmp_path / "sys/fs/cgroup").mkdir(parents=True)
    (tmp_path / "sys/fs/cgroup/cpu.max").write_text("max 100000\n")
    (tmp_path / "sys/fs/cgroup/memory.max").write_text("max\n")
    limits = host_limits.probe_host_limits(tmp_path)
    assert limits["cgroup_cpu_limit"] is None and limits["cgroup_memory_bytes"] is None


def test_the_live_probe_never_raises():
    limits = host_limits.probe_host_limits()
    assert set(limits) >= {"shm_bytes", "memlock", "cpus_usable", "swap_bytes", "iommu"}
