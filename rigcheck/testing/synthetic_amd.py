"""Synthetic amdsmi facts of a healthy, idle AMD Instinct GPU, and the ROCm versions of its host
(synthetic.py uses these).

The shapes are facts/amd/smi.py's and rocm.py's; the values are those of a healthy bare-metal node:
every error counter zero, no retired page, the power cap at the class's TDP, a Gen5 x16 link,
all seven xGMI links of each GPU up on a multi-GPU node, the same firmware on every GPU, and a
ROCm 6.2 host under a torch built for ROCm 6.2. Firmware strings, the bad-page threshold and the
driver/library versions are representative figures, not read from a machine.
"""

from __future__ import annotations

from typing import Any

from rigcheck.spec import Spec

# The RAS blocks amdsmi_get_gpu_ras_block_features_enabled walks (AmdSmiGpuBlock less INVALID
# and RESERVED), and those an MI300X enables (rocm-smi --showrasinfo all lists them ENABLED).
RAS_BLOCKS = ("UMC", "SDMA", "GFX", "MMHUB", "ATHUB", "PCIE_BIF", "HDP", "XGMI_WAFL", "DF",
              "SMN", "SEM", "MP0", "MP1", "FUSE", "MCA", "VCN", "JPEG", "IH", "MPIO")  # fmt: skip
RAS_ENABLED = {"UMC", "SDMA", "GFX", "MMHUB", "PCIE_BIF", "HDP", "XGMI_WAFL", "MP0", "MP1"}
ZERO = {"correctable": 0, "uncorrectable": 0, "deferred": 0}
# Representative firmware versions in amdsmi_get_fw_info's formats (hex blocks dotted, PM decimal).
FIRMWARE = {
    "vbios": "113-M3000100-103",
    "blocks": {
        "AMDSMI_FW_ID_PSP_SOSDRV": "00.36.02.59",
        "AMDSMI_FW_ID_TA_RAS": "1B.00.01.3E",
        "AMDSMI_FW_ID_TA_XGMI": "20.00.00.10",
        "AMDSMI_FW_ID_PM": "00.85.124.00",
        "AMDSMI_FW_ID_CP_MEC1": "155",
        "AMDSMI_FW_ID_RLC": "90",
    },
}
PAGES_NONE = {"retired": 0, "pending": 0, "unreservable": 0}
PCIE_GEN5_X16 = {"gen_current": 5, "gen_max": 5, "width_current": 16, "width_max": 16,
                 "replays": 0, "recoveries": 0, "nak_sent": 0, "nak_received": 0}  # fmt: skip
# An idle MI300X's hotspot and the thresholds amd-smi static --limit shows for it (slowdown
# 100 C, shutdown 110 C): representative figures, not read from a machine.
IDLE_TEMPERATURE = {"hotspot_c": 40, "slowdown_c": 100, "shutdown_c": 110}
BAD_PAGE_THRESHOLD = 128  # representative: the driver computes it from VRAM and EEPROM size
# A ROCm 6.2 host: amdgpu-dkms 6.8.5 is the kernel driver that ROCm 6.2.0 installs.
ROCM_HOST = {
    "kernel_driver": "6.8.5",
    "installed": "6.2.0-66",
    "hsa_runtime": "1.14.60200",
    "amdsmi_lib": "24.6.2",
}


def amd_health(spec: Spec, count: int) -> dict[str, Any]:
    """amd_smi.probe_device's record of one healthy, idle AMD GPU on a node of `count` GPUs."""
    tdp = float(spec.expected_value("tdp"))
    links = spec.expect("gpu_link")["links_per_device"]
    return {
        "ras": dict(ZERO),
        "ras_blocks": [
            {"block": b, "state": "ENABLED", "counts": dict(ZERO)}
            if b in RAS_ENABLED
            else {"block": b, "state": "DISABLED", "counts": None}
            for b in RAS_BLOCKS
        ],
        "bad_pages": {**PAGES_NONE, "threshold": BAD_PAGE_THRESHOLD},
        "power_cap": {"cap_w": tdp, "default_w": tdp, "max_w": tdp},
        "pcie_link": dict(PCIE_GEN5_X16),
        "pcie_aer": {"correctable": 0, "nonfatal": 0, "fatal": 0},  # sysfs, as on NVIDIA
        # A lone GPU (a VM's SR-IOV function) has no peers: amdsmi answers NOT_SUPPORTED.
        "xgmi": _xgmi(links) if count > 1 else None,
        "amd_firmware": {"vbios": FIRMWARE["vbios"], "blocks": dict(FIRMWARE["blocks"])},
        "amd_temperature": dict(IDLE_TEMPERATURE),
        "amd_violation": None,  # the ROCm 6.2 host's amdsmi has no amdsmi_get_violation_status
        "processes": [],  # idle: nothing holds the GPU
    }


def _xgmi(links: int) -> dict[str, Any]:
    return {"total_links": links, "up": links, "down": 0, "disabled": 0,
            "error_status": "no_errors"}  # fmt: skip


# A ROCm 7.0 host, for gfx950 (MI355X), which ROCm 6.x does not support: the same kind of
# representative figures, written by hand, not read from a machine.
ROCM7_HOST = {
    "kernel_driver": "6.14.14",
    "installed": "7.0.0-38",
    "hsa_runtime": "1.18.70000",
    "amdsmi_lib": "26.0.0",
}


def rocm_host(hip: str | None = None) -> dict[str, Any]:
    """rocm.probe_rocm's record of the host a torch built for ROCm `hip` runs on (6.2 unless 7)."""
    return dict(ROCM7_HOST if (hip or "").startswith("7.") else ROCM_HOST)
