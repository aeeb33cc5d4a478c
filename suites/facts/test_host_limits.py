"""Host limits that break ML jobs on healthy hardware: /dev/shm, memlock, CPUs, RAM, IOMMU."""

import pytest

from rigcheck.facts.host.iommu_devices import TRANSLATED
from rigcheck.facts.probe import is_error
from rigcheck.facts.typed import VIRT_VMS
from rigcheck.limits import health_limit, newer_fact
from rigcheck.require import fact

pytestmark = pytest.mark.facts

GIB = 2**30


def _linux(spec):
    if spec.backend == "mps":
        pytest.skip(f"{spec.name} is macOS: no /dev/shm, cgroups or IOMMU groups to check")


def test_shm_size(spec, facts):
    _linux(spec)
    floor = health_limit(spec, "shm_min_bytes")
    size = newer_fact(facts, "host_limits.shm_bytes")
    assert size >= floor, (
        f"/dev/shm is {size / 2**20:.0f} MiB, below {floor / 2**20:.0f} MiB: DataLoader workers "
        "die with 'bus error' and NCCL's shared-memory transport fails. In Docker, run with "
        "--shm-size=1g (or --ipc=host); in Kubernetes mount an emptyDir with medium: Memory."
    )


def test_memlock_unlimited_with_rdma(spec, facts):
    _linux(spec)
    health_limit(spec, "memlock_unlimited_with_rdma")
    rdma = newer_fact(facts, "host_limits.rdma_devices")
    if rdma == 0:
        pytest.skip("no InfiniBand/RoCE device: memlock only limits RDMA registration")
    unlimited = fact(facts, "host_limits.memlock.unlimited")
    soft = fact(facts, "host_limits.memlock.soft_bytes")
    assert unlimited is True, (
        f"locked-memory limit is {soft} bytes with {rdma} RDMA devices: "
        "NCCL cannot register buffers for InfiniBand/RoCE and falls back to sockets or fails. "
        "Set `ulimit -l unlimited` (limits.conf memlock, or docker --ulimit memlock=-1)."
    )


def _cpus(facts) -> float:
    usable = newer_fact(facts, "host_limits.cpus_usable")
    quota = fact(facts, "host_limits.cgroup_cpu_limit")
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
    ram = fact(facts, "host.memory_total_bytes")
    cgroup = newer_fact(facts, "host_limits.cgroup_memory_bytes")
    if cgroup is not None:
        ram = min(ram, cgroup)
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
    if fact(facts, "host.virtualization") in VIRT_VMS:
        pytest.skip("a VM: the hypervisor, not this kernel, decides the IOMMU mode")
    newer_fact(facts, "host_limits.iommu")
    groups = fact(facts, "host_limits.iommu.groups")
    by_type = _iommu_domain_types(facts, groups)
    if by_type is not None:  # the kernel said what it did for each device: judge that
        translated = [f"{name} ({kind})" for name, kind in by_type if kind in TRANSLATED]
        assert not translated, (
            f"the IOMMU translates DMA of {', '.join(translated)}: GPU peer-to-peer over PCIe is "
            f"{IOMMU_ADVICE}"
        )
        return
    flags = fact(facts, "host_limits.iommu.cmdline")
    # iommu.passthrough=1 is the generic spelling of iommu=pt (kernel-parameters.txt)
    off = ("iommu=pt", "iommu.passthrough=1", "intel_iommu=off", "amd_iommu=off", "iommu=off")
    passthrough = any(flag in off for flag in flags)
    assert groups == 0 or passthrough, (
        f"the IOMMU translates DMA ({groups} groups, boot flags {', '.join(flags) or 'none'}; "
        f"no per-device domain type to read): GPU peer-to-peer over PCIe is {IOMMU_ADVICE}"
    )


IOMMU_ADVICE = (
    "redirected through the root complex or blocked, and NCCL hangs or slows down. Boot with "
    "iommu=pt (or disable the IOMMU in the BIOS) as NCCL's troubleshooting guide says."
)


def _iommu_domain_types(facts, groups: int) -> list[tuple[str, str]] | None:
    """(device, domain type) for every GPU and RDMA NIC, "none" where no IOMMU group holds it;
    None when some device's type is unknown (Linux before 5.11, a recording without it, a
    device without a group while the IOMMU has groups): then the boot flags are judged."""
    entries = facts.find("host_limits.iommu_devices")
    if not isinstance(entries, list) or not entries:
        return None
    found = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or is_error(entry.get("type")):
            return None
        if entry.get("type") is None and (groups > 0 or entry.get("group") is not None):
            return None
        path = f"host_limits.iommu_devices.{i}"
        kind = fact(facts, f"{path}.type")
        label = f"{fact(facts, f'{path}.name')} {fact(facts, f'{path}.bus_id')}"
        found.append((label + ("" if kind is None else f", group {fact(facts, f'{path}.group')}"),
                      kind or "none"))  # fmt: skip
    return found


def test_acs_not_redirecting_p2p(spec, facts, expected_gpus):
    _linux(spec)
    rdma = facts.find("host_limits.rdma_devices")
    if spec.backend == "cpu" or (expected_gpus < 2 and not (isinstance(rdma, int) and rdma)):
        pytest.skip("one GPU and no RDMA NIC: no peer-to-peer traffic for ACS to redirect")
    if fact(facts, "host.virtualization") in VIRT_VMS:
        pytest.skip("a VM: the hypervisor's PCIe topology, not this guest's, decides ACS")
    if facts.origin.get("kind") == "recorded" and facts.find("host_limits.acs") is None:
        pytest.skip("ACS is not in this recording (an older rigcheck): record it again as root")
    ports = fact(facts, "host_limits.acs.ports")  # not root: fails with how to read it
    redirected = []
    for i in range(len(ports)):
        bits = fact(facts, f"host_limits.acs.ports.{i}.redirect")
        if bits:
            below = ", ".join(fact(facts, f"host_limits.acs.ports.{i}.devices"))
            port = fact(facts, f"host_limits.acs.ports.{i}.bus_id")
            redirected.append(f"switch port {port} above {below}: {'+ '.join(bits)}+")
    assert not redirected, (
        f"PCIe ACS redirects peer-to-peer traffic to the root complex: {'; '.join(redirected)}. "
        "GPU-to-GPU copies and GPUDirect RDMA through the switch slow down or hang. Disable ACS "
        "in the BIOS, or at boot with `setpci -s <port> ECAP_ACS+0x6.w=0000` on each port as "
        "NCCL's troubleshooting guide shows; on a rented machine, ask the provider."
    )
