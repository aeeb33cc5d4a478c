"""Error counters, fabric and firmware of one NVIDIA GPU: what only counters show.

Called from nvml.probe_device with its open handle. Each key is one NVML read (or one sysfs
file): a value, None where the device does not support it (NVML's NotSupported), or an error
record. Counts are since the driver loaded ("volatile") unless named "aggregate" (lifetime,
kept in the InfoROM).
"""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Any

from rigcheck.facts.nvidia.clock_event_time import clock_event_time
from rigcheck.facts.nvidia.clock_limits import clock_limits
from rigcheck.facts.nvidia.features import read_feature
from rigcheck.facts.probe import error_record, guarded

SYSFS_PCI = Path("/sys/bus/pci/devices")
# NVML's NVLink data-link error counters (nvmlNvLinkErrorCounter_t), by the names we store.
NVLINK_COUNTERS = {
    "replay": "NVML_NVLINK_ERROR_DL_REPLAY",
    "recovery": "NVML_NVLINK_ERROR_DL_RECOVERY",
    "crc_flit": "NVML_NVLINK_ERROR_DL_CRC_FLIT",
    "crc_data": "NVML_NVLINK_ERROR_DL_CRC_DATA",
}
FABRIC_STATES = {0: "not_supported", 1: "not_started", 2: "in_progress", 3: "completed"}
# NVML_FI_DEV_GET_GPU_RECOVERY_ACTION (nvml.h; answered from R565) and nvmlGpuRecoveryAction_t.
RECOVERY_ACTION_FIELD = 230
RECOVERY_ACTIONS = {0: "none", 1: "gpu_reset", 2: "node_reboot", 3: "drain_p2p",
                    4: "drain_and_reset", 5: "recover_imex_domain", 6: "bus_reset",
                    7: "system_reboot"}  # fmt: skip
AER_FILES = {"correctable": "aer_dev_correctable", "nonfatal": "aer_dev_nonfatal",
             "fatal": "aer_dev_fatal"}  # fmt: skip
AER_TOTALS = ("TOTAL_ERR_COR", "TOTAL_ERR_NONFATAL", "TOTAL_ERR_FATAL")


def probe_counters(nvml, h, pci: Any, read, sysfs: Path | None = None) -> dict[str, Any]:
    """The counter facts of one device; `read` is nvml.read (value, None or error record)."""
    bus_id = pci.get("bus_id") if isinstance(pci, dict) else None
    sysfs = sysfs or SYSFS_PCI  # read at call time, so tests can point it at a fake /sys
    return {
        "pcie_replays": read(lambda: nvml.nvmlDeviceGetPcieReplayCounter(h)),
        "pcie_aer": guarded(lambda: _aer(sysfs, bus_id)),
        "nvlink_errors": read(lambda: _nvlink_errors(nvml, h)),
        "fabric": read_feature(nvml, read, "fabric", lambda: _fabric(nvml, h)),
        "recovery_action": read(lambda: _recovery_action(nvml, h)),
        "ecc_by_location": read(lambda: _ecc_by_location(nvml, h)),
        "firmware": read(lambda: _firmware(nvml, h)),
        "applications_clocks": read(lambda: _applications_clocks(nvml, h)),
        "temperature_thresholds": read(lambda: _temperature_thresholds(nvml, h)),
        "clock_limits": read(lambda: clock_limits(nvml, h)),
        "clock_event_time_ns": read(lambda: clock_event_time(nvml, h)),
    }


def _aer(sysfs: Path, bus_id: str | None) -> Any:
    """AER totals the kernel counted for the GPU's PCI function; None without AER support."""
    if bus_id is None:
        return error_record("no PCI bus id from NVML: cannot find the GPU in sysfs")
    device = sysfs / bus_id
    if not device.exists():
        return error_record(f"{device} does not exist: is /sys mounted (containers)?")
    if not (device / AER_FILES["correctable"]).exists():
        return None  # kernel without AER statistics (before 4.19) or AER not enabled
    try:
        return {key: _aer_total(device / name) for key, name in AER_FILES.items()}
    except (OSError, ValueError) as exc:
        return error_record(f"{device}: {type(exc).__name__}: {exc}")


def _aer_total(path: Path) -> int:
    """The TOTAL_ERR_* line of an aer_dev_* file ("RxErr 0\\n...\\nTOTAL_ERR_COR 0")."""
    for line in path.read_text().splitlines():
        name, _, count = line.strip().partition(" ")
        if name in AER_TOTALS:
            return int(count)
    raise ValueError(f"no TOTAL_ERR_* line in {path.name}")


def _nvlink_errors(nvml, h) -> list[dict[str, Any]]:
    """Per active link, each data-link error count (None where the GPU does not count it)."""
    links = []
    for link in range(nvml.NVML_NVLINK_MAX_LINKS):
        try:
            if nvml.nvmlDeviceGetNvLinkState(h, link) != nvml.NVML_FEATURE_ENABLED:
                continue
        except nvml.NVMLError:
            continue  # no such link on this device
        entry: dict[str, Any] = {"link": link}
        for name, const in NVLINK_COUNTERS.items():
            try:
                entry[name] = nvml.nvmlDeviceGetNvLinkErrorCounter(h, link, getattr(nvml, const))
            except nvml.NVMLError_NotSupported:
                entry[name] = None  # Blackwell counts these as field values instead
        links.append(entry)
    return links


class FabricInfo(ctypes.Structure):
    """nvmlGpuFabricInfo_t exactly as nvml.h lays it out (R530 and later).

    Not pynvml's own struct: before nvidia-ml-py 13, its clusterUuid is 80 chars where the
    library writes 16 bytes, so status and state read as 0 ("not_supported") on every HGX
    node; and 12.535.x names the third field partitionId where later versions say cliqueId.
    pynvml passes this pointer straight to the C function (the caller allocates, the wrapper
    takes two arguments).
    """

    _fields_ = [
        ("clusterUuid", ctypes.c_ubyte * 16),  # NVML_GPU_FABRIC_UUID_LEN
        ("status", ctypes.c_int),  # nvmlReturn_t
        ("cliqueId", ctypes.c_uint),  # partitionId in the R530-R545 headers
        ("state", ctypes.c_ubyte),  # nvmlGpuFabricState_t
    ]


def _fabric(nvml, h) -> dict[str, Any]:
    """NVSwitch fabric registration (fabric manager); state not_supported off NVSwitch systems."""
    info = FabricInfo()
    nvml.nvmlDeviceGetGpuFabricInfo(h, ctypes.byref(info))
    return {
        "state": FABRIC_STATES.get(info.state, f"unknown_{info.state}"),
        "status": int(info.status),  # an NVML return code: 0 is success
        "clique_id": int(info.cliqueId),
        "cluster_uuid": bytes(info.clusterUuid).hex(),
    }


def _recovery_action(nvml, h) -> str:
    """What the driver asks done before the GPU is used again ("none" when healthy); a driver
    before R565 answers the field NOT_SUPPORTED, which read() stores as None."""
    (field,) = nvml.nvmlDeviceGetFieldValues(h, [RECOVERY_ACTION_FIELD])
    if field.nvmlReturn != 0:
        raise nvml.NVMLError(field.nvmlReturn)
    action = int(field.value.uiVal)
    return RECOVERY_ACTIONS.get(action, f"unknown_{action}")


def _ecc_by_location(nvml, h) -> dict[str, int]:
    """Corrected and uncorrected counts in DRAM (HBM) and SRAM, as nvidia-smi splits them."""
    counts = {}
    for where in ("DRAM", "SRAM"):
        location = getattr(nvml, f"NVML_MEMORY_LOCATION_{where}")
        for kind, err in (("corrected", "CORRECTED"), ("uncorrected", "UNCORRECTED")):
            for span, counter in (("volatile", "VOLATILE_ECC"), ("aggregate", "AGGREGATE_ECC")):
                counts[f"{where.lower()}_{kind}_{span}"] = nvml.nvmlDeviceGetMemoryErrorCounter(
                    h,
                    getattr(nvml, f"NVML_MEMORY_ERROR_TYPE_{err}"),
                    getattr(nvml, f"NVML_{counter}"),
                    location,
                )
    return counts


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _firmware(nvml, h) -> dict[str, str]:
    return {
        "vbios": _text(nvml.nvmlDeviceGetVbiosVersion(h)),
        "inforom_image": _text(nvml.nvmlDeviceGetInforomImageVersion(h)),
        "inforom_oem": _text(nvml.nvmlDeviceGetInforomVersion(h, nvml.NVML_INFOROM_OEM)),
    }


def _applications_clocks(nvml, h) -> dict[str, int]:
    """Clocks applications run at (`nvidia-smi -ac` sets them) and the board's defaults."""
    return {
        "sm_mhz": nvml.nvmlDeviceGetApplicationsClock(h, nvml.NVML_CLOCK_SM),
        "mem_mhz": nvml.nvmlDeviceGetApplicationsClock(h, nvml.NVML_CLOCK_MEM),
        "default_sm_mhz": nvml.nvmlDeviceGetDefaultApplicationsClock(h, nvml.NVML_CLOCK_SM),
        "default_mem_mhz": nvml.nvmlDeviceGetDefaultApplicationsClock(h, nvml.NVML_CLOCK_MEM),
    }


def _temperature_thresholds(nvml, h) -> dict[str, int]:
    """Where the GPU slows itself down and where it shuts down, in degrees C."""
    return {
        "slowdown_c": nvml.nvmlDeviceGetTemperatureThreshold(
            h, nvml.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN
        ),
        "shutdown_c": nvml.nvmlDeviceGetTemperatureThreshold(
            h, nvml.NVML_TEMPERATURE_THRESHOLD_SHUTDOWN
        ),
    }
