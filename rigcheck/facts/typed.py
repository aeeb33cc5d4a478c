"""The declared type and unit of every fact a check judges, and what is wrong with a value.

Checks read facts only through rigcheck.require.fact() / device_fact(), which look the path
up here. A value of the wrong type, a placeholder string ("N/A", "[Not Supported]"), an empty
container or a null the probe should not have stored is then a "cannot judge" failure naming
the fact, never a truthy pass and never a TypeError inside a check.

Paths are dotted as Facts.get reads them, with `*` for any list index; device facts are
written `devices.*.<key>`. This module is pure (no pytest) so the fuzz and the property tests
can use it; it also records which concrete paths were judged, so they can derive the set of
leaves a check reads instead of keeping a hand list. What a kind accepts: fact_type.py.
"""

from __future__ import annotations

from typing import Any

from rigcheck.facts.fact_type import FactType
from rigcheck.facts.host.iommu_devices import DOMAIN_TYPES

NVML = "`nvidia-smi -q` shows it; re-record with `rigcheck facts -o FILE`"
TORCH = "`python -m torch.utils.collect_env` shows it; re-record with `rigcheck facts -o FILE`"
HOST = "`python -m cpuinfo` and psutil show it; re-record with `rigcheck facts -o FILE`"
SMOKE = "the torch probe's smoke test writes it: `python -m rigcheck.facts.host.torch_probe`"
TOPO = "`nvidia-smi topo -m` shows it; re-record with `rigcheck facts -o FILE`"
UPTIME = "`cat /proc/uptime` shows it; re-record with `rigcheck facts -o FILE`"
KERNEL_LOG = (
    "`journalctl -k -b | grep Xid` (as root) shows it; re-record with `rigcheck facts -o FILE`"
)
HOST_LIMITS = (
    "`df -h /dev/shm`, `ulimit -l` and /sys show it; re-record with `rigcheck facts -o FILE`"
)
AMDSMI = "`amd-smi static` and `amd-smi metric` show it; re-record with `rigcheck facts -o FILE`"
FABRIC = "`ibstat` and /sys/class/infiniband show it; re-record with `rigcheck facts -o FILE`"


# What host/system.py's virtualization fact can say: systemd-detect-virt's answers, or the CPU flag.
VIRT_NONE = ("none", "none detected")
VIRT_VMS = (
    "kvm", "amazon", "qemu", "bochs", "xen", "uml", "vmware", "oracle", "microsoft", "zvm",
    "parallels", "bhyve", "qnx", "acrn", "powervm", "apple", "sre", "google", "hypervisor (flag)",
)  # fmt: skip
VIRT_CONTAINERS = ("openvz", "lxc", "lxc-libvirt", "systemd-nspawn", "docker", "podman", "rkt",
                   "wsl", "proot", "pouch")  # fmt: skip


def _t(kind: str, why: str, **kw: Any) -> FactType:
    return FactType(kind, why, **kw)


TYPES: dict[str, FactType] = {
    # identity
    "devices.*.name": _t("text", "the product name the spec's name_pattern matches"),
    "devices.*.pci": _t("object", "the PCI identity that says which product this is"),
    "devices.*.pci.device_id": _t("text", "the PCI device id that says which product this is"),
    "devices.*.pci.bus_id": _t("text", "the PCI address that tells two GPUs apart"),
    "devices.*.uuid": _t("text", "the identity that tells two GPUs apart"),
    "devices.*.serial": _t("text", "the board serial that tells two boards apart"),
    "devices.*.memory_total_bytes": _t("count", "the memory the class promises", unit="bytes"),
    "devices.*.memory_free_bytes": _t("count", "memory others hold", unit="bytes"),
    "devices.*.compute_capability": _t("version", "the architecture the class needs"),
    "devices.*.gcn_arch": _t("text", "the AMD architecture the class needs"),
    # health
    "devices.*.ecc": _t("object", "ECC mode, now and after the next reboot"),
    "devices.*.ecc.current": _t("bool", "whether memory errors are corrected now"),
    "devices.*.ecc.pending": _t("bool", "the ECC mode after the next reboot"),
    "devices.*.ecc_errors": _t("object", "memory errors ECC could not correct"),
    "devices.*.ecc_errors.volatile_uncorrected": _t("count", "uncorrected errors since boot"),
    "devices.*.ecc_errors.aggregate_uncorrected": _t("count", "uncorrected errors, lifetime"),
    "devices.*.retired_pages": _t("object", "page retirement (pre-Ampere memory repair)"),
    "devices.*.retired_pages.pending": _t("bool", "a page retirement waiting for a reset"),
    "devices.*.remapped_rows": _t("object", "row remapping (Ampere+ memory repair)"),
    "devices.*.remapped_rows.pending": _t("bool", "a row remap waiting for a reset"),
    "devices.*.remapped_rows.failure": _t("bool", "a row remap that failed (replace the GPU)"),
    "devices.*.remapped_rows.uncorrectable": _t("count", "rows remapped for uncorrectable errors"),
    "devices.*.throttle_reasons": _t("list", "why clocks are held down", items="text"),
    "devices.*.power": _t("object", "the enforced power limit"),
    "devices.*.power.limit_w": _t("number", "the enforced power limit", unit="W"),
    "devices.*.power.default_limit_w": _t(
        "number", "the board's default power limit (null: not read)", unit="W", nullable=True
    ),
    "devices.*.pcie": _t("object", "the PCIe link to the host"),
    "devices.*.pcie.gen_max": _t("count", "the fastest PCIe generation this slot allows"),
    "devices.*.pcie.width_current": _t("count", "the PCIe lanes the link trained at"),
    "devices.*.pcie.width_max": _t("count", "the most PCIe lanes this board and slot can train"),
    "devices.*.persistence_mode": _t("bool", "whether the driver stays loaded between runs"),
    "devices.*.mig": _t("object", "MIG mode, now and after the next reboot"),
    "devices.*.mig.current": _t("bool", "whether the GPU is split into MIG slices now"),
    "devices.*.mig.pending": _t("bool", "the MIG mode after the next reboot or reset"),
    "devices.*.processes": _t("list", "processes holding the GPU", items="object"),
    "devices.*.processes.*.pid": _t("count", "the process holding the GPU"),
    "devices.*.processes.*.used_bytes": _t(
        "count", "the memory a process holds", unit="bytes", nullable=True
    ),
    "devices.*.nvlink": _t("list", "the NVLinks of the GPU", items="object"),
    "devices.*.nvlink.*.active": _t("bool", "whether an NVLink is up"),
    "devices.*.index": _t("count", "NVML's index of the GPU"),
    # topology (rigcheck/facts/nvidia/topology.py)
    "topology.gpus": _t("list", "every GPU in NVML's topology", items="object", empty_ok=False),
    "topology.gpus.*.index": _t("count", "NVML's index of a GPU in the topology"),
    "topology.pairs": _t("list", "every GPU pair in NVML's topology", items="object"),
    "topology.host_numa_cpus": _t("object", "the host's NUMA nodes and their CPUs"),
    "topology.pairs.*.gpus": _t("list", "the two GPUs of a pair", items="count", empty_ok=False),
    # host
    "host.cpu.model": _t("text", "the CPU every report names"),
    "host.cpu.cores_logical": _t("count", "the CPUs the host has"),
    "host.cpu.simd_flags": _t(
        "list", "the vector units CPU kernels need", items="text", empty_ok=False
    ),
    "host.memory_total_bytes": _t("count", "the host memory", unit="bytes"),
    "host.os_release": _t("text", "the OS every report names"),
    # software
    "software.torch": _t("object", "the torch the suite judges"),
    "software.torch.version": _t("version", "the torch the suite judges"),
    "software.torch.build": _t(
        "choice", "which accelerator torch was built for", choices=("cuda", "rocm", "cpu")
    ),
    "software.torch.device_count": _t("count", "the GPUs torch sees"),
    "software.torch.cuda_available": _t("bool", "whether torch can use CUDA"),
    "software.torch.cuda_version": _t(
        "version", "the CUDA torch was built with (null: not a CUDA build)", nullable=True
    ),
    "software.torch.cudnn_version": _t(
        "count", "the cuDNN torch ships (null: none)", nullable=True
    ),
    "software.torch.nccl_version": _t(
        "version", "the NCCL torch ships (null: none)", nullable=True
    ),
    "software.torch.mps_built": _t("bool", "whether torch was built with MPS"),
    "software.torch.mps_available": _t("bool", "whether MPS works here"),
    "software.nvidia_driver.version": _t("version", "the NVIDIA driver"),
    "software.nvidia_driver.cuda_driver_version": _t("version", "the newest CUDA the driver runs"),
    "software.nvcc": _t(
        "object", "the CUDA compiler extensions build with (null: none)", nullable=True
    ),
    "software.nvcc.version": _t("version", "the CUDA release of nvcc"),
    "software.nvcc.path": _t("text", "which nvcc extensions build with"),
    "software.flash_attn": _t("object", "the flash-attn install"),
    "software.flash_attn.installed": _t("bool", "whether flash-attn is installed"),
    "software.flash_attn.import_error": _t("text", "why flash-attn does not import", nullable=True),
    # smoke tests (tiny real kernels run by the torch probe)
    "smoke.bf16_matmul": _t("list", "a bf16 matmul per GPU", items="object", empty_ok=False),
    "smoke.bf16_matmul.*.ok": _t("bool", "whether a bf16 matmul gave the right answer"),
    "smoke.cpu_bf16_matmul.ok": _t("bool", "whether a bf16 matmul gave the right answer"),
    "smoke.mps.bf16_matmul.ok": _t("bool", "whether a bf16 matmul gave the right answer"),
    "smoke.fp8_matmul": _t("list", "an fp8 matmul per GPU", items="object", empty_ok=False),
    "smoke.fp8_matmul.*.ok": _t("bool", "whether an fp8 matmul gave the right answer"),
    "smoke.flash_attn_forward.ok": _t("bool", "whether flash-attn's forward pass is right"),
    "smoke.mps.roundtrip.ok": _t("bool", "whether a tensor survives a trip to MPS"),
    "smoke.mps.float64.behaviour": _t(
        "choice", "how MPS answers float64", choices=("rejected", "supported", "wrong_result")
    ),
    "smoke.mps.autocast_fp16.ok": _t("bool", "whether autocast on MPS gives fp16"),
    # counters and logs (issue 12: rigcheck/facts/nvidia/counters.py, kernel_log/, host/limits.py)
    "devices.*.pcie_replays": _t("count", "PCIe packets resent since the driver loaded"),
    "devices.*.pcie_aer": _t("object", "AER errors the kernel counted for the GPU"),
    "devices.*.pcie_aer.correctable": _t("count", "correctable PCIe errors since boot"),
    "devices.*.pcie_aer.nonfatal": _t("count", "non-fatal uncorrectable PCIe errors since boot"),
    "devices.*.pcie_aer.fatal": _t("count", "fatal PCIe errors since boot"),
    "devices.*.nvlink_errors": _t("list", "each active NVLink's error counters", items="object"),
    "devices.*.nvlink_errors.*.link": _t("count", "which NVLink the counters belong to"),
    "devices.*.nvlink_errors.*.replay": _t(
        "count", "NVLink replays (null: not counted here)", nullable=True
    ),
    "devices.*.nvlink_errors.*.recovery": _t(
        "count", "NVLink recoveries (null: not counted here)", nullable=True
    ),
    "devices.*.nvlink_errors.*.crc_flit": _t(
        "count", "NVLink flit CRC errors (null: not counted here)", nullable=True
    ),
    "devices.*.nvlink_errors.*.crc_data": _t(
        "count", "NVLink data CRC errors (null: not counted here)", nullable=True
    ),
    "devices.*.fabric": _t("object", "the GPU's NVSwitch fabric registration"),
    "devices.*.fabric.state": _t(
        "choice",
        "whether the fabric manager registered the GPU",
        choices=("not_supported", "not_started", "in_progress", "completed"),
    ),
    "devices.*.fabric.status": _t("count", "the fabric registration's NVML return code"),
    "devices.*.recovery_action": _t(
        "choice",
        "what the driver asks done before the GPU is used again (NVML's GPU recovery action)",
        choices=(
            "none",
            "gpu_reset",
            "node_reboot",
            "drain_p2p",
            "drain_and_reset",
            "recover_imex_domain",
            "bus_reset",
            "system_reboot",
        ),
    ),
    **{
        f"devices.*.ecc_by_location.{where}_{kind}_{span}": _t(
            "count", f"{kind} ECC errors in {where.upper()} ({span})"
        )
        for where in ("dram", "sram")
        for kind in ("corrected", "uncorrected")
        for span in ("volatile", "aggregate")
    },
    "devices.*.ecc_by_location": _t("object", "ECC errors split by DRAM and SRAM"),
    "devices.*.retired_pages.single_bit": _t("count", "pages retired for single-bit errors"),
    "devices.*.retired_pages.double_bit": _t("count", "pages retired for double-bit errors"),
    "devices.*.applications_clocks": _t("object", "the clocks applications run at"),
    "devices.*.applications_clocks.sm_mhz": _t("count", "the SM applications clock", unit="MHz"),
    "devices.*.applications_clocks.mem_mhz": _t(
        "count", "the memory applications clock", unit="MHz"
    ),
    "devices.*.applications_clocks.default_sm_mhz": _t(
        "count", "the board's default SM applications clock", unit="MHz"
    ),
    "devices.*.applications_clocks.default_mem_mhz": _t(
        "count", "the board's default memory applications clock", unit="MHz"
    ),
    "devices.*.temperature_c": _t("count", "the GPU's temperature now", unit="C"),
    "devices.*.clocks": _t("object", "the GPU's clocks now and their maxima"),
    "devices.*.clocks.sm_max_mhz": _t("count", "the board's maximum SM clock", unit="MHz"),
    "devices.*.clock_limits": _t("object", "the SM clock ceilings NVML states"),
    "devices.*.clock_limits.sm_customer_boost_max_mhz": _t(
        "count",
        "the highest SM clock the board may boost to (null: not reported)",
        unit="MHz",
        nullable=True,
    ),
    "devices.*.temperature_thresholds": _t("object", "where the GPU slows and shuts down"),
    "devices.*.temperature_thresholds.slowdown_c": _t(
        "count", "where the GPU slows itself down", unit="C"
    ),
    "devices.*.firmware": _t("object", "the GPU's firmware versions"),
    "devices.*.firmware.vbios": _t("text", "the VBIOS version every GPU should share"),
    "devices.*.firmware.inforom_image": _t("text", "the InfoROM image every GPU should share"),
    # AMD through amdsmi (issue 12: rigcheck/facts/amd/smi.py, rocm.py)
    "devices.*.ras": _t("object", "ECC errors amdsmi counts over all RAS blocks"),
    **{
        f"devices.*.ras.{kind}": _t("count", f"{kind} ECC errors since the driver loaded")
        for kind in ("correctable", "uncorrectable", "deferred")
    },
    "devices.*.ras_blocks": _t("list", "each RAS block's state and counts", items="object"),
    "devices.*.ras_blocks.*.block": _t("text", "which RAS block (UMC is the HBM controller)"),
    "devices.*.ras_blocks.*.state": _t("text", "whether the block's ECC is ENABLED"),
    "devices.*.ras_blocks.*.counts": _t(
        "object", "a RAS block's error counts (null: not counted)", nullable=True
    ),
    **{
        f"devices.*.ras_blocks.*.counts.{kind}": _t("count", f"{kind} errors in a RAS block")
        for kind in ("correctable", "uncorrectable", "deferred")
    },
    "devices.*.bad_pages": _t("object", "HBM pages retired for ECC errors"),
    "devices.*.bad_pages.retired": _t("count", "pages retired for ECC errors"),
    "devices.*.bad_pages.pending": _t("count", "pages waiting to be retired at the next reset"),
    "devices.*.bad_pages.unreservable": _t("count", "bad pages the driver could not retire"),
    "devices.*.bad_pages.threshold": _t(
        "count",
        "retired pages at which the driver flags the GPU (null: not reported)",
        nullable=True,
    ),
    "devices.*.power_cap": _t("object", "the GPU's power cap"),
    "devices.*.power_cap.cap_w": _t("number", "the power cap in force", unit="W"),
    "devices.*.pcie_link": _t("object", "the PCIe link amdsmi reports"),
    "devices.*.pcie_link.gen_max": _t("count", "the fastest PCIe generation of the device"),
    "devices.*.pcie_link.width_current": _t("count", "the PCIe lanes the link trained at"),
    "devices.*.pcie_link.replays": _t(
        "count", "PCIe replays (null: not counted here)", nullable=True
    ),
    "devices.*.xgmi": _t("object", "the GPU's xGMI (Infinity Fabric) links"),
    "devices.*.xgmi.total_links": _t("count", "xGMI links the GPU has"),
    "devices.*.xgmi.up": _t("count", "xGMI links up"),
    "devices.*.xgmi.error_status": _t(
        "choice",
        "xGMI error state (null: not reported)",
        choices=("no_errors", "error", "multiple_errors"),
        nullable=True,
    ),
    "devices.*.amd_firmware": _t("object", "the GPU's VBIOS and firmware versions"),
    "devices.*.amd_firmware.vbios": _t("text", "the VBIOS version every GPU should share"),
    "devices.*.amd_firmware.blocks": _t("object", "firmware versions every GPU should share"),
    "devices.*.amd_temperature": _t("object", "the AMD GPU's hotspot sensor and its thresholds"),
    "devices.*.amd_temperature.hotspot_c": _t(
        "count", "the AMD GPU's hotspot (junction) temperature now", unit="C"
    ),
    "devices.*.amd_temperature.slowdown_c": _t(
        "count", "where the AMD GPU slows itself down (amdsmi CRITICAL)", unit="C"
    ),
    "devices.*.amd_temperature.shutdown_c": _t(
        "count",
        "where the AMD GPU shuts down (amdsmi EMERGENCY; null: not reported)",
        unit="C",
        nullable=True,
    ),
    "devices.*.amd_violation": _t(
        "object", "the power and thermal limits holding the AMD GPU down (amdsmi violation status)"
    ),
    "devices.*.amd_violation.active": _t(
        "object", "each limit's active flag now (null: the GPU does not report that kind)"
    ),
    "devices.*.amd_violation.percent": _t(
        "object", "each limit's share of recent time in violation, % (null: not reported)"
    ),
    "topology.pairs.*.link": _t("object", "how amdsmi says two AMD GPUs are joined"),
    "topology.pairs.*.link.type": _t("text", "the link between two AMD GPUs (xgmi, pcie)"),
    "topology.pairs.*.link.hops": _t("count", "hops between two AMD GPUs"),
    "topology.pairs.*.p2p.accessible": _t("bool", "whether two AMD GPUs reach each other (P2P)"),
    "software.torch.hip_version": _t(
        "version", "the ROCm (HIP) torch was built with (null: not a ROCm build)", nullable=True
    ),
    "software.rocm": _t("object", "the host's ROCm versions"),
    "software.rocm.installed": _t(
        "version", "the ROCm release on the host (null: none installed)", nullable=True
    ),
    "software.rocm.kernel_driver": _t("text", "the amdgpu kernel driver's version"),
    "kernel_log": _t("object", "the Xid events the NVIDIA driver logged"),
    "kernel_log.uptime_s": _t(
        "number", "how long the PCIe replay counters can have counted", unit="s"
    ),
    "uptime": _t("object", "how long the host has been up (rigcheck/facts/host/uptime.py)"),
    "uptime.since_boot_s": _t(
        "number", "how long the PCIe replay counters can have counted", unit="s"
    ),
    "kernel_log.source": _t("text", "where the kernel log was read"),
    "kernel_log.window_s": _t(
        "count", "how far back Xid events count (null: since boot)", unit="s", nullable=True
    ),
    "kernel_log.xid_events": _t("list", "the Xid events in the window", items="object"),
    "kernel_log.xid_events.*.code": _t("count", "the Xid code NVIDIA's catalogue explains"),
    "kernel_log.xid_events.*.text": _t(
        "text", "the Xid line's text: NVLink Xids' severity and Xid 154's action are in it"
    ),
    "kernel_log.xid_events.*.bus_id": _t(
        "text", "the PCI address of the GPU the Xid names (null: redacted)", nullable=True
    ),
    "kernel_log.amdgpu_events": _t(
        "list", "amdgpu's fault lines in the window (kernel_log/amdgpu.py)", items="object"
    ),
    "kernel_log.amdgpu_events.*.text": _t("text", "the amdgpu line, which names the fault"),
    "kernel_log.amdgpu_events.*.bus_id": _t(
        "text", "the PCI address of the GPU amdgpu names (null: the line names none)", nullable=True
    ),
    "kernel_log.nvrm_events": _t(
        "list", "the NVIDIA driver's non-Xid fault records (kernel_log/nvrm.py)", items="object"
    ),
    "kernel_log.nvrm_events.*.kind": _t("text", "which NVRM record it is (nvrm_log.CATALOGUE)"),
    "kernel_log.nvrm_events.*.text": _t("text", "the NVRM record, which names the fault"),
    "kernel_log.nvrm_events.*.bus_id": _t(
        "text", "the PCI address of the GPU the record names (null: it names none)", nullable=True
    ),
    "kernel_log.mlx5_events": _t(
        "list", "the ConnectX NIC driver's fault records (kernel_log/mlx5.py)", items="object"
    ),
    "kernel_log.mlx5_events.*.kind": _t("text", "which mlx5_core record it is (mlx5.CATALOGUE)"),
    "kernel_log.mlx5_events.*.text": _t("text", "the mlx5_core line, which names the fault"),
    "kernel_log.mlx5_events.*.bus_id": _t(
        "text", "the PCI address of the NIC the record names (null: it names none)", nullable=True
    ),
    "kernel_log.unexplained_count": _t(
        "count", "driver error lines no rule explains (kernel_log/unexplained.py)"
    ),
    "kernel_log.unexplained_events": _t(
        "list", "driver error lines no rule explains, each quoted", items="object"
    ),
    "kernel_log.unexplained_events.*.text": _t("text", "the driver's error line"),
    "kernel_log.unexplained_events.*.bus_id": _t(
        "text", "the PCI address the line names (null: it names none)", nullable=True
    ),
    "host.virtualization": _t(
        "choice",
        "whether a hypervisor sits under this host (systemd-detect-virt, else the CPU flag)",
        choices=(*VIRT_NONE, *VIRT_VMS, *VIRT_CONTAINERS),
    ),
    "host_limits.shm_bytes": _t("count", "the /dev/shm size", unit="bytes"),
    "host_limits.memlock": _t("object", "the locked-memory ulimit"),
    "host_limits.memlock.unlimited": _t("bool", "whether memory locking is unlimited"),
    "host_limits.memlock.soft_bytes": _t(
        "count", "the locked-memory limit (null: unlimited)", unit="bytes", nullable=True
    ),
    "host_limits.rdma_devices": _t("count", "InfiniBand/RoCE devices"),
    "host_limits.cpus_usable": _t("count", "CPUs this process may run on"),
    "host_limits.cgroup_cpu_limit": _t(
        "number", "the cgroup CPU quota (null: none)", unit="CPUs", nullable=True
    ),
    "host_limits.cgroup_memory_bytes": _t(
        "count", "the cgroup memory limit (null: none)", unit="bytes", nullable=True
    ),
    "host_limits.iommu": _t("object", "the IOMMU's groups and boot flags"),
    "host_limits.iommu.groups": _t("count", "IOMMU groups: 0 when the IOMMU is off"),
    "host_limits.iommu.cmdline": _t("list", "the IOMMU boot flags", items="text"),
    "host_limits.iommu_devices.*.name": _t("text", "the GPU or RDMA NIC the IOMMU entry is for"),
    "host_limits.iommu_devices.*.bus_id": _t("text", "the device's PCI address"),
    "host_limits.iommu_devices.*.group": _t(
        "count", "the device's IOMMU group (null: none)", nullable=True
    ),
    "host_limits.iommu_devices.*.type": _t(
        "choice",
        "the DMA domain type of the device's IOMMU group (null: no IOMMU group)",
        nullable=True,
        choices=DOMAIN_TYPES,
    ),
    "host_limits.acs": _t("object", "ACS on the PCIe switch ports above the GPUs (root reads it)"),
    "host_limits.acs.ports": _t("list", "the switch ports above the GPUs and RDMA NICs"),
    "host_limits.acs.ports.*.bus_id": _t("text", "the switch port's PCI address"),
    "host_limits.acs.ports.*.devices": _t(
        "list", "the GPUs and NICs below the port", items="text", empty_ok=False
    ),
    "host_limits.acs.ports.*.redirect": _t(
        "list", "the ACS bits that send peer-to-peer traffic upstream", items="text"
    ),
}


def how_to_read(path: str, vendor: str | None = None) -> str:
    """How a user reads a fact by hand; a device's facts come from its vendor's tool."""
    first = path.split(".")[0]
    if first == "devices" and vendor == "amd":
        return AMDSMI
    others = {"kernel_log": KERNEL_LOG, "host_limits": HOST_LIMITS, "fabric": FABRIC}
    others["uptime"] = UPTIME
    return {"devices": NVML, "host": HOST, "software": TORCH, "smoke": SMOKE, **others}.get(
        first, TOPO
    )


def pattern_of(path: str) -> str:
    """'devices.3.ecc.current' -> 'devices.*.ecc.current' (list indices become `*`)."""
    return ".".join("*" if part.isdigit() else part for part in path.split("."))


def declared(path: str) -> FactType:
    """The declared type of a fact; a check reading an undeclared fact is a rigcheck bug."""
    try:
        return TYPES[pattern_of(path)]
    except KeyError:
        raise KeyError(
            f"fact {path!r} has no declared type: add it to rigcheck/facts/typed.py TYPES"
        ) from None


# Concrete paths judged since recording started (None: not recording). The property tests
# and the fuzz read it after replaying a good snapshot: the leaves its checks really judge.
_judged: set[str] | None = None
last_read: str | None = None  # the fact a check read last, for the crash report


# Device facts read with required=False: there a null is NVML's NotSupported, which the
# check accepts, not a broken fact.
_unsupported_ok: set[str] = set()


def start_recording() -> None:
    global _judged
    _judged = set()
    _unsupported_ok.clear()


def stop_recording() -> tuple[set[str], set[str]]:
    """(paths judged, device facts whose check accepts null as Not Supported)."""
    global _judged
    judged, _judged = _judged or set(), None
    return judged, set(_unsupported_ok)


def note_read(path: str, unsupported_ok: str | None = None) -> None:
    global last_read
    last_read = path
    if _judged is not None:
        _judged.add(path)
        if unsupported_ok:
            _unsupported_ok.add(unsupported_ok)
