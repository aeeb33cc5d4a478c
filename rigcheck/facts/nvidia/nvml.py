"""NVIDIA facts through NVML (nvidia-ml-py): driver, and every device's identity and health."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rigcheck.facts.nvidia.counters import probe_counters
from rigcheck.facts.nvidia.features import read_feature
from rigcheck.facts.probe import error_record, guarded

# NVML's clock event (throttle) reason bits, named as nvidia-smi names them. 0x200 and 0x400,
# named after NVML's constants, are nvmlClocksEventReasonBoardLimit and
# nvmlClocksEventReasonReliability: NVML API reference, group nvmlClocksEventReasons
# (https://docs.nvidia.com/deploy/nvml-api/api/group__nvmlClocksEventReasons.html), and
# cuda.bindings.nvml.ClocksEventReasons (EVENT_REASON_BOARD_LIMIT 512, _RELIABILITY 1024).
# nvidia-ml-py 13.615 has them only under the deprecated nvmlClocksThrottleReason* names.
THROTTLE_REASONS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
    0x200: "board_limit",
    0x400: "reliability",
}


def _nvml():
    import pynvml  # nvidia-ml-py; imported only when probing

    return pynvml


def read(fn: Callable[[], Any]) -> Any:
    """One NVML read: the value, None where the device does not support it, or an error record."""
    nvml = _nvml()
    try:
        return fn()
    except nvml.NVMLError_NotSupported:
        return None
    except Exception as exc:
        return error_record(f"{type(exc).__name__}: {exc}")


def probe_nvidia() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(driver facts, device list). Without a driver, both say why instead of raising."""
    try:
        nvml = _nvml()
        nvml.nvmlInit()
    except Exception as exc:
        reason = f"NVML unavailable ({type(exc).__name__}: {exc})"
        return {"present": False, "reason": reason}, []
    try:
        driver = {
            "present": True,
            "version": read(nvml.nvmlSystemGetDriverVersion),
            "cuda_driver_version": read(lambda: _cuda_version(nvml)),
        }
        count = read(nvml.nvmlDeviceGetCount)
        if not isinstance(count, int):
            driver["reason"] = f"NVML could not count the GPUs: {count}"
            return driver, []
        return driver, [_probe_or_lost(i) for i in range(count)]
    finally:
        guarded(nvml.nvmlShutdown)


def _probe_or_lost(index: int) -> dict[str, Any]:
    """A GPU NVML counts but cannot open (fallen off the bus) is a device that says so."""
    try:
        return probe_device(index)
    except Exception as exc:
        reason = error_record(
            f"NVML cannot open GPU {index} ({type(exc).__name__}: {exc}): a GPU that fell off "
            "the bus? Check `nvidia-smi` and `dmesg | grep -i xid`"
        )
        return {"index": index, "vendor": "nvidia", "name": reason, "pci": reason}


def _cuda_version(nvml) -> str:
    """The newest CUDA the driver supports, e.g. 12040 -> "12.4"."""
    v = nvml.nvmlSystemGetCudaDriverVersion_v2()
    return f"{v // 1000}.{(v % 1000) // 10}"


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def probe_device(index: int) -> dict[str, Any]:
    """Every fact about one NVIDIA device that a check or a report uses."""
    nvml = _nvml()
    h = nvml.nvmlDeviceGetHandleByIndex(index)
    pci = read(lambda: _pci(nvml, h))
    memory = read(lambda: nvml.nvmlDeviceGetMemoryInfo(h))
    return {
        "index": index,
        "vendor": "nvidia",
        "name": read(lambda: _text(nvml.nvmlDeviceGetName(h))),
        "pci": pci,
        "uuid": read(lambda: _text(nvml.nvmlDeviceGetUUID(h))),
        "serial": read(lambda: _text(nvml.nvmlDeviceGetSerial(h))),
        "memory_total_bytes": memory.total if hasattr(memory, "total") else memory,
        "memory_free_bytes": memory.free if hasattr(memory, "free") else memory,
        "compute_capability": read(
            lambda: "{}.{}".format(*nvml.nvmlDeviceGetCudaComputeCapability(h))
        ),
        "ecc": read(lambda: _pair(nvml.nvmlDeviceGetEccMode(h))),
        "ecc_errors": read(lambda: _ecc_errors(nvml, h)),
        "retired_pages": read(lambda: _retired_pages(nvml, h)),
        "remapped_rows": read_feature(nvml, read, "remapped_rows", lambda: _remapped_rows(nvml, h)),
        "clocks": read(lambda: _clocks(nvml, h)),
        "throttle_reasons": read(lambda: _throttle_reasons(nvml, h)),
        "temperature_c": read(lambda: nvml.nvmlDeviceGetTemperature(h, nvml.NVML_TEMPERATURE_GPU)),
        "power": read(lambda: _power(nvml, h)),
        "pcie": read(lambda: _pcie(nvml, h)),
        "persistence_mode": read(lambda: nvml.nvmlDeviceGetPersistenceMode(h) == 1),
        "mig": read_feature(nvml, read, "mig", lambda: _pair(nvml.nvmlDeviceGetMigMode(h))),
        "processes": read(lambda: _processes(nvml, h)),
        "nvlink": read(lambda: _nvlink(nvml, h)),
        "numa_node": read(lambda: _numa_node(nvml, h, pci)),
        **probe_counters(nvml, h, pci, read),  # counters.py: error counters, fabric, firmware
    }


def _pair(current_pending: tuple[int, int]) -> dict[str, bool]:
    current, pending = current_pending
    return {"current": bool(current), "pending": bool(pending)}


def _pci(nvml, h) -> dict[str, str]:
    info = nvml.nvmlDeviceGetPciInfo(h)
    # NVML packs (device id << 16 | vendor id) into one 32-bit field.
    return {
        "bus_id": _short_bus_id(_text(info.busId)),
        "device_id": f"0x{info.pciDeviceId >> 16:04X}",
        "vendor_id": f"0x{info.pciDeviceId & 0xFFFF:04X}",
        "subsystem_id": f"0x{info.pciSubSystemId:08X}",
    }


def _short_bus_id(bus_id: str) -> str:
    """NVML's "00000000:18:00.0" as sysfs and lspci write it: "0000:18:00.0"."""
    domain, _, rest = bus_id.partition(":")
    return f"{domain[-4:]}:{rest}".lower()


def _ecc_errors(nvml, h) -> dict[str, int]:
    def total(kind, counter):
        return nvml.nvmlDeviceGetTotalEccErrors(h, kind, counter)

    unc, corr = nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nvml.NVML_MEMORY_ERROR_TYPE_CORRECTED
    return {
        "volatile_uncorrected": total(unc, nvml.NVML_VOLATILE_ECC),
        "aggregate_uncorrected": total(unc, nvml.NVML_AGGREGATE_ECC),
        "volatile_corrected": total(corr, nvml.NVML_VOLATILE_ECC),
        "aggregate_corrected": total(corr, nvml.NVML_AGGREGATE_ECC),
    }


def _retired_pages(nvml, h) -> dict[str, Any]:
    """Page retirement (pre-Ampere); Ampere and later remap rows instead (NotSupported here)."""
    pending = nvml.nvmlDeviceGetRetiredPagesPendingStatus(h)
    double = nvml.nvmlDeviceGetRetiredPages(h, nvml.NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR)
    single = nvml.nvmlDeviceGetRetiredPages(
        h, nvml.NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS
    )
    return {"pending": bool(pending), "double_bit": len(double), "single_bit": len(single)}


def _remapped_rows(nvml, h) -> dict[str, Any]:
    corrected, uncorrected, pending, failed = nvml.nvmlDeviceGetRemappedRows(h)
    return {
        "correctable": corrected,
        "uncorrectable": uncorrected,
        "pending": bool(pending),
        "failure": bool(failed),
    }


def _clocks(nvml, h) -> dict[str, int]:
    return {
        "sm_mhz": nvml.nvmlDeviceGetClockInfo(h, nvml.NVML_CLOCK_SM),
        "mem_mhz": nvml.nvmlDeviceGetClockInfo(h, nvml.NVML_CLOCK_MEM),
        "sm_max_mhz": nvml.nvmlDeviceGetMaxClockInfo(h, nvml.NVML_CLOCK_SM),
        "mem_max_mhz": nvml.nvmlDeviceGetMaxClockInfo(h, nvml.NVML_CLOCK_MEM),
    }


def newest(nvml, names: list[str], *args: Any) -> Any:
    """Call the first of these NVML functions the driver exports.

    nvidia-ml-py binds functions newer than the installed driver: on an older driver the call
    raises FunctionNotFound (or, for unversioned names, NVMLLibraryMismatchError).
    """
    missing = missing_function_errors(nvml)
    for name in names[:-1]:
        if hasattr(nvml, name):
            try:
                return getattr(nvml, name)(*args)
            except missing:
                continue
    return getattr(nvml, names[-1])(*args)


def missing_function_errors(nvml) -> tuple[type[Exception], ...]:
    """What a call to a function the driver lacks raises. NVMLLibraryMismatchError exists only
    from nvidia-ml-py 12.550.52: older bindings raise FunctionNotFound alone."""
    mismatch = getattr(nvml, "NVMLLibraryMismatchError", None)
    return (nvml.NVMLError_FunctionNotFound,) + ((mismatch,) if mismatch else ())


def _throttle_reasons(nvml, h) -> list[str]:
    # Drivers before R535 have only the throttle name for what NVML now calls clock events.
    names = ["nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"]
    return reason_names(newest(nvml, names, h))


def reason_names(mask: int) -> list[str]:
    """The names of the reasons set in an NVML clock event mask. Bits a newer driver adds are
    kept as one unknown_0x... name, never dropped: a GPU slowed for a reason this table lacks
    must not read as a GPU slowed for no reason."""
    names = [name for bit, name in THROTTLE_REASONS.items() if mask & bit]
    unknown = mask & ~sum(THROTTLE_REASONS)
    return names + ([f"unknown_0x{unknown:x}"] if unknown else [])


def _optional(nvml, fn: Callable[[], Any]) -> Any:
    """A read that only adds context to a fact: None when it fails, so the fact is still kept."""
    try:
        return fn()
    except (nvml.NVMLError, *missing_function_errors(nvml)):
        return None


def _power(nvml, h) -> dict[str, float | None]:
    """The enforced limit is the fact; the rest (not read in some vGPU guests) is context."""
    watts = 1000.0  # NVML reports milliwatts

    def extra(fn):
        value = _optional(nvml, lambda: fn(h))
        return None if value is None else value / watts

    return {
        "limit_w": nvml.nvmlDeviceGetEnforcedPowerLimit(h) / watts,
        "default_limit_w": extra(nvml.nvmlDeviceGetPowerManagementDefaultLimit),
        "max_limit_w": extra(lambda h: nvml.nvmlDeviceGetPowerManagementLimitConstraints(h)[1]),
        "draw_w": extra(nvml.nvmlDeviceGetPowerUsage),
    }


def _pcie(nvml, h) -> dict[str, int | None]:
    """Current link, the device's own maximum, and the maximum this device+slot can reach."""
    return {
        "gen_current": nvml.nvmlDeviceGetCurrPcieLinkGeneration(h),
        "gen_max": nvml.nvmlDeviceGetMaxPcieLinkGeneration(h),
        # Drivers before R510 lack this call; messages name it, no check needs it.
        "gen_device_max": _optional(nvml, lambda: nvml.nvmlDeviceGetGpuMaxPcieLinkGeneration(h)),
        "width_current": nvml.nvmlDeviceGetCurrPcieLinkWidth(h),
        "width_max": nvml.nvmlDeviceGetMaxPcieLinkWidth(h),
    }


# A driver before R510 exports only the _v2 process lists (and the v1 ones); nvidia-ml-py
# before 12.550.52 binds neither: its unversioned name calls the _v3 symbol.
NO_PROCESS_CALL = (
    "this driver has no _v3 process list (a driver before R510) and the installed "
    "nvidia-ml-py binds no _v2 one: install nvidia-ml-py>=12.550.52, or update the driver"
)


def _processes(nvml, h) -> list[dict[str, Any]]:
    """Compute and graphics processes; the _v3 calls need R510+, older drivers have _v2."""
    seen = {}
    for kind in ("Compute", "Graphics"):
        name = f"nvmlDeviceGet{kind}RunningProcesses"
        try:
            procs = newest(nvml, [f"{name}_v3", f"{name}_v2", name], h)
        except nvml.NVMLError_NotSupported:
            if kind == "Compute":
                raise
            procs = []  # graphics processes are only a courtesy; compute ones are the check
        except missing_function_errors(nvml) as exc:
            if hasattr(nvml, f"{name}_v2"):
                raise
            raise RuntimeError(NO_PROCESS_CALL) from exc
        for proc in procs:
            seen[proc.pid] = {"pid": proc.pid, "used_bytes": proc.usedGpuMemory}
    return list(seen.values())


def nvlink_states(nvml, h) -> list[tuple[int, bool]]:
    """(link number, active) for each NVLink the device has; empty without NVLink."""
    states = []
    for link in range(nvml.NVML_NVLINK_MAX_LINKS):
        try:
            state = nvml.nvmlDeviceGetNvLinkState(h, link)
        except nvml.NVMLError:
            continue  # this link number does not exist on the device
        states.append((link, state == nvml.NVML_FEATURE_ENABLED))
    return states


# nvmlDeviceGetNvLinkVersion answers an nvmlNvlinkVersion_t (nvml.h, nvidia-ml-py's
# NVML_NVLINK_VERSION_*), not the NVLink version: 4 is NVLink 3.0 (A100), 6 is 4.0 (H100).
NVLINK_VERSIONS = {1: "1.0", 2: "2.0", 3: "2.2", 4: "3.0", 5: "3.1", 6: "4.0", 7: "5.0", 8: "6.0"}


def nvlink_version(code: Any) -> Any:
    """NVML's enum value -> the NVLink version ("4.0"); an unknown code is kept, named so."""
    if not isinstance(code, int) or isinstance(code, bool):
        return code  # None (not supported) or an error record, as read
    return NVLINK_VERSIONS.get(code, f"unknown (NVML code {code})")


def _nvlink(nvml, h) -> list[dict[str, Any]]:
    """One entry per NVLink the device has; an empty list means no NVLink at all."""
    links = []
    for link, active in nvlink_states(nvml, h):
        code = read(lambda link=link: nvml.nvmlDeviceGetNvLinkVersion(h, link))
        links.append(
            {"link": link, "active": active, "version": nvlink_version(code), "nvml_code": code}
        )
    return links


def _numa_node(nvml, h, pci: Any) -> int | None:
    """sysfs first: NVML's NUMA id answers only on some platforms (Grace), N/A on x86."""
    node_file = Path(f"/sys/bus/pci/devices/{pci['bus_id']}/numa_node") if _ok(pci) else None
    if node_file is not None and node_file.exists():
        node = int(node_file.read_text().strip())
        return None if node < 0 else node  # -1: the platform reports no NUMA affinity
    getter = getattr(nvml, "nvmlDeviceGetNumaNodeId", None)
    try:
        return getter(h) if getter is not None else None
    except nvml.NVMLError_FunctionNotFound:
        return None  # a binding newer than the driver: the call came with R545


def _ok(value: Any) -> bool:
    return isinstance(value, dict) and "bus_id" in value
