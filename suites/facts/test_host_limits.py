"""Host limits that break ML jobs on healthy hardware: /dev/shm, memlock, CPUs, RAM, IOMMU."""

import pytest

from rigcheck.limits import count, health_limit, newer_fact, record
from rigcheck.require import require

pytestmark = pytest.mark.facts

GIB = 2**30


def _linux(spec):
    if spec.backend == "mps":
        pytest.skip(f"{spec.name} is macOS: no /dev/shm, cgroups or IOMMU groups to check")


def test_shm_size(spec, facts):
    _linux(spec)
    floor = health_limit(spec, "shm_min_bytes")
    size = count(newer_fact(facts, "host_limits.shm_bytes"), "host_limits.shm_bytes")
    assert size >= floor, (
        f"/dev/shm is {size / 2**20:.0f} MiB, below {floor / 2**20:.0f} MiB: DataLoader workers "
        "die with 'bus error' and NCCL's shared-memory transport fails. In Docker, run with "
        "--shm-size=1g (or --ipc=host); in Kubernetes mount an emptyDir with medium: Memory."
    )


def test_memlock_unlimited_with_rdma(spec, facts):
    _linux(spec)
    health_limit(spec, "memlock_unlimited_with_rdma")
    rdma = count(newer_fact(facts, "host_limits.rdma_devices"), "host_limits.rdma_devices")
    if rdma == 0:
        pytest.skip("no InfiniBand/RoCE device: memlock only limits RDMA registration")
    memlock = newer_fact(facts, "host_limits.memlock")
    memlock = record(memlock, "host_limits.memlock", ("unlimited",))
    assert memlock["unlimited"] is True, (
        f"locked-memory limit is {memlock.get('soft_bytes')} bytes with {rdma} RDMA devices: "
        "NCCL cannot register buffers for InfiniBand/RoCE and falls back to sockets or fails. "
        "Set `ulimit -l unlimited` (limits.conf memlock, or docker --ulimit memlock=-1)."
    )


def _cpus(facts) -> float:
    usable = count(newer_fact(facts, "host_limits.cpus_usable"), "host_limits.cpus_usable")
    quota = newer_fact(facts, "host_limits.cgroup_cpu_limit")
    if quota is not None and not isinstance(quota, (int, float)):
        pytest.fail(f"cannot check: host_limits.cgroup_cpu_limit is {quota!r}", pytrace=False)
    return usable if quota is None else min(usable, quota)


def test_cpus_per_gpu(spec, facts, expected_gpus):
    if spec.backend in ("cpu", "mps"):
        pytest.skip(f"{spec.name} has no discrete GPU to feed")
    per_gpu = health_limit(spec, "cpus_per_gpu_min")
    cpus = _cpus(facts)
    assert cpus >= per_gpu * expected_gpus, (
        f"{cpus:g} CPUs usable for {expected_gpus} GPU(s), below {per_gpu:g} per GPU: input "
        "pipelines starve the GPUs. A cgroup quota or taskset limits this process: ask for more "
        "CPUs (Slurm --cpus-per-gpu, Kubernetes resources.requests.cpu)."
    )


def test_host_ram_for_gpu_memory(spec, facts, expected_gpus):
    if spec.backend in ("cpu", "mps"):
        pytest.skip(f"{spec.name} has no discrete GPU memory to stage")
    ratio = health_limit(spec, "host_ram_per_gpu_memory_min")
    ram = count(require(facts, "host.memory_total_bytes"), "host.memory_total_bytes")
    cgroup = newer_fact(facts, "host_limits.cgroup_memory_bytes")
    if cgroup is not None:
        ram = min(ram, count(cgroup, "host_limits.cgroup_memory_bytes"))
    need = ratio * expected_gpus * spec.memory_bytes
    assert ram >= need, (
        f"host RAM {ram / GIB:.0f} GiB, below {ratio:g} x the GPUs' {expected_gpus} x "
        f"{spec.memory_bytes / GIB:.0f} GiB ({need / GIB:.0f} GiB): loading or saving a "
        "checkpoint will fail or swap. Ask for a larger memory limit or a larger machine."
    )


def test_iommu_not_translating_p2p(spec, facts, expected_gpus):
    _linux(spec)
    if spec.backend == "cpu" or expected_gpus < 2:
        pytest.skip("fewer than two GPUs: no peer-to-peer traffic for an IOMMU to block")
    if require(facts, "host.virtualization") not in ("none", "none detected"):
        pytest.skip("a VM: the hypervisor, not this kernel, decides the IOMMU mode")
    iommu = newer_fact(facts, "host_limits.iommu")
    iommu = record(iommu, "host_limits.iommu", ("groups", "cmdline"))
    groups = count(iommu["groups"], "host_limits.iommu.groups")
    passthrough = any(flag in ("iommu=pt", "intel_iommu=off", "amd_iommu=off")
                      for flag in iommu["cmdline"])  # fmt: skip
    assert groups == 0 or passthrough, (
        f"the IOMMU translates DMA ({groups} groups, boot flags {iommu['cmdline'] or 'none'}): "
        "GPU peer-to-peer over PCIe is redirected through the root complex or blocked, and NCCL "
        "hangs or slows down. Boot with iommu=pt (or disable the IOMMU in the BIOS) as NCCL's "
        "troubleshooting guide says."
    )
