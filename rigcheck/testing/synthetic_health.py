"""Synthetic counters, kernel log and host limits of a healthy machine (synthetic.py uses these).

The shapes are the probes' (facts/nvidia/counters.py, facts/kernel_log/, facts/host/limits.py); the
values are those of a healthy idle machine: every error counter zero, no Xid since boot, the fabric
registered where the class has NVSwitches, the same firmware on every GPU. Firmware strings and
temperature thresholds are representative figures, not read from a machine.
"""

from __future__ import annotations

from typing import Any

from rigcheck.facts.nvidia.clock_event_time import field_ids
from rigcheck.facts.probe import error_record
from rigcheck.spec import Spec

GIB = 2**30
MEMLOCK_DEFAULT = 8 * 2**20  # the kernel's default RLIMIT_MEMLOCK since 5.16 (8 MiB)
# Representative VBIOS / InfoROM strings in NVML's format, one per board generation.
FIRMWARE = {"vbios": "96.00.74.00.0D", "inforom_image": "G520.0200.00.05", "inforom_oem": "2.1"}
# NVML's slowdown and shutdown thresholds on a datacenter board (A100/H100 report 89/92 C).
THRESHOLDS = {"slowdown_c": 89, "shutdown_c": 92}


def _cc(board: Any) -> tuple[int, ...]:
    return tuple(int(p) for p in board.compute_capability.split("."))


def device_counters(spec: Spec, board: Any, virtualized: bool) -> dict[str, Any]:
    """counters.probe_counters's record of one healthy, idle NVIDIA GPU."""
    ecc = bool(spec.expected_value("ecc"))
    geforce = "GeForce" in board.name
    return {
        "pcie_replays": 0,
        "pcie_aer": None if virtualized else {"correctable": 0, "nonfatal": 0, "fatal": 0},
        "nvlink_errors": _nvlink_errors(spec),
        "fabric": _fabric(spec, board),
        "ecc_by_location": _ecc_by_location() if ecc and _cc(board) >= (8, 0) else None,
        "firmware": dict(FIRMWARE),
        "applications_clocks": None if geforce else {
            "sm_mhz": board.sm_max_mhz,
            "mem_mhz": board.mem_max_mhz,
            "default_sm_mhz": board.sm_max_mhz,
            "default_mem_mhz": board.mem_max_mhz,
        },
        "temperature_thresholds": dict(THRESHOLDS),
        # nvmlDeviceGetClock: every id equals the maximum SM clock on a datacenter board, as
        # `nvidia-smi -q -d CLOCK` shows on A100 and H100; GeForce answers Not Supported.
        "clock_limits": None if geforce else {
            "sm_app_target_mhz": board.sm_max_mhz,
            "sm_app_default_mhz": board.sm_max_mhz,
            "sm_customer_boost_max_mhz": board.sm_max_mhz,
        },
    }  # fmt: skip


def clock_event_time(driver: str) -> dict[str, int] | None:
    """A GPU never held down: every clock-event counter its driver has at 0 (nvml.h's field ids
    by branch, rigcheck/facts/nvidia/clock_event_time.py); before R450, none answered."""
    branch = int(driver.split(".")[0])
    return dict.fromkeys(field_ids(branch), 0) if branch >= 450 else None


def recovery_action(driver: str) -> str | None:
    """A healthy GPU's NVML recovery action: none; a driver before R565 does not answer it."""
    return "none" if int(driver.split(".")[0]) >= 565 else None


def _nvlink_errors(spec: Spec) -> list[dict[str, Any]]:
    link = spec.expect("gpu_link")
    if link["type"] != "nvlink":
        return []
    zero = {"replay": 0, "recovery": 0, "crc_flit": 0, "crc_data": 0}
    return [{"link": i, **zero} for i in range(link["links_per_device"])]


def _fabric(spec: Spec, board: Any) -> dict[str, Any] | None:
    """Hopper and later answer; on NVSwitch boards the fabric manager has registered the GPU."""
    if _cc(board) < (9, 0):
        return None  # NVML: NotSupported before Hopper
    switched = spec.expect("gpu_link")["type"] == "nvlink" and board.nvlink_fabric == "nvswitch"
    return {
        "state": "completed" if switched else "not_supported",
        "status": 0,
        "clique_id": 0,
        "cluster_uuid": "00" * 16,
    }


def _ecc_by_location() -> dict[str, int]:
    return {
        f"{where}_{kind}_{span}": 0
        for where in ("dram", "sram")
        for kind in ("corrected", "uncorrected")
        for span in ("volatile", "aggregate")
    }


def kernel_log(os_name: str) -> dict[str, Any]:
    """kernel_log.probe_kernel_log's record of a healthy Linux machine a day after boot."""
    if os_name != "Linux":
        return error_record(f"no Linux kernel log on {os_name}: Xid is NVIDIA-on-Linux")
    return {
        "source": "journalctl -k -b",
        "window_s": None,
        "uptime_s": 86400.0,
        "lines_read": 2412,
        "xid_count": 0,
        "xid_events": [],
        "amdgpu_count": 0,
        "amdgpu_events": [],
        "nvrm_count": 0,
        "nvrm_events": [],
        "levels_read": 2412,
        "unexplained_count": 0,
        "unexplained_events": [],
    }


# The server profiles of synthetic_tables.HOSTS: eight InfiniBand HCAs beside eight GPUs.
RDMA_HOSTS = {"synthetic-xeon": 8, "synthetic-epyc": 8}


def host_limits_for(host: dict[str, Any]) -> dict[str, Any]:
    """The limits of synthetic.py's host record (its hostname names the HOSTS profile)."""
    rdma = RDMA_HOSTS.get(host["hostname"], 0)
    ram_gib = host["memory_total_bytes"] // GIB
    return host_limits(host["os"], ram_gib, host["cpu"]["cores_logical"], rdma)


def host_limits(os_name: str, ram_gib: int, cpus: int, rdma_devices: int) -> dict[str, Any]:
    """host_limits.probe_host_limits's record: a server image set up for RDMA, or defaults."""
    if os_name != "Linux":
        missing = error_record(f"/dev/shm does not exist on {os_name}")
        return {
            "shm_bytes": missing,
            "memlock": {"unlimited": False, "soft_bytes": None, "hard_bytes": None},
            "cpus_usable": cpus,
            "cgroup_cpu_limit": None,
            "cgroup_memory_bytes": None,
            "swap_bytes": 0,
            "iommu": error_record("/proc/cmdline is not readable here (not Linux?)"),
            "rdma_devices": 0,
        }
    rdma = rdma_devices > 0
    return {
        "shm_bytes": ram_gib * GIB // 2,  # tmpfs's default size: half of RAM
        "memlock": {
            "unlimited": rdma,
            "soft_bytes": None if rdma else MEMLOCK_DEFAULT,
            "hard_bytes": None if rdma else MEMLOCK_DEFAULT,
        },
        "cpus_usable": cpus,
        "cgroup_cpu_limit": None,
        "cgroup_memory_bytes": None,
        "swap_bytes": 0,
        "iommu": {"groups": 0, "cmdline": []},
        "rdma_devices": rdma_devices,
    }


def sized_for_gpus(host: dict[str, Any], gpus: int) -> dict[str, Any]:
    """A cloud VM with N GPUs has N times the one-GPU shape's CPUs and memory (GCP n1 and AWS
    g4dn sizes grow with the GPUs); bare-metal profiles are already whole servers."""
    if host["virtualization"] == "none" or gpus <= 1:
        return host
    cpu = dict(host["cpu"])
    cpu["cores_physical"] *= gpus
    cpu["cores_logical"] *= gpus
    extra = host["memory_total_bytes"] * (gpus - 1)
    return {
        **host,
        "cpu": cpu,
        "memory_total_bytes": host["memory_total_bytes"] + extra,
        "memory_available_bytes": host["memory_available_bytes"] + extra,
    }


def iommu_devices_for(os_name: str, devices: list[dict[str, Any]]) -> Any:
    """iommu_devices.probe_iommu_devices's record: the IOMMU off (host_limits above has no
    groups), so no group holds any GPU; the RDMA NICs are not modelled."""
    if os_name != "Linux":
        return error_record("/sys/bus/pci/devices does not exist (not Linux?)")
    return [
        {"role": "gpu", "name": f"GPU {d['index']}", "bus_id": d["pci"]["bus_id"],
         "group": None, "type": None}
        for d in devices
    ]  # fmt: skip


def acs_for(host: dict[str, Any], devices: list[dict[str, Any]]) -> Any:
    """acs.probe_acs's record, as root records it: on bare metal each GPU behind its own PCIe
    switch downstream port (the bus below the GPU's, a representative address) with ACS
    redirect off, as NCCL asks; in a VM the GPUs sit on the virtual root bus, under no switch."""
    if host["os"] != "Linux":
        return error_record("/sys/bus/pci/devices does not exist (not Linux?)")
    if host["virtualization"] not in ("none", "none detected"):
        return {"ports": []}
    ports = []
    for d in devices:
        domain, bus, rest = d["pci"]["bus_id"].split(":")
        port = f"{domain}:{int(bus, 16) - 1:02x}:{rest}"
        ports.append({"bus_id": port, "devices": [f"GPU {d['index']}"], "control": 0,
                      "redirect": []})  # fmt: skip
    return {"ports": ports}


def smoke_mps(smoke: dict[str, Any]) -> dict[str, Any]:
    """The Mac's smoke results: the CPU's (`smoke`) and what MPS answered."""
    smoke["mps"] = {
        "roundtrip": {"ok": True},
        "float64": {
            "behaviour": "rejected",
            "error": "TypeError: Cannot convert a MPS Tensor to float64 dtype as the MPS "
            "framework doesn't support float64. Please use float32 instead.",
        },
        "autocast_fp16": {"ok": True, "dtype": "torch.float16"},
        "bf16_matmul": {"ran": True, "max_rel_err": 0.0024, "ok": True},
    }
    return smoke
