"""NVML reads taken before and after the load: identity, limits, and the error counters."""

from __future__ import annotations

from typing import Any

from rigcheck.facts.nvidia.nvml import _short_bus_id, read


def identity(nvml: Any, handle: Any) -> dict[str, Any]:
    """Name and bus id, as the checks name a GPU: the bus id as the facts and the kernel's Xid
    lines write it ("0000:3b:00.0"), not NVML's "00000000:3B:00.0"."""
    name = read(lambda: nvml.nvmlDeviceGetName(handle))
    bus = read(lambda: _short_bus_id(_text(nvml.nvmlDeviceGetPciInfo(handle).busId)))
    return {"name": _text(name) or "unknown GPU", "bus_id": _text(bus)}


def limits(nvml: Any, handle: Any) -> dict[str, Any]:
    """The maximum SM clock, the enforced power limit, and the slowdown/shutdown temperatures."""
    power = read(lambda: nvml.nvmlDeviceGetEnforcedPowerLimit(handle))
    thresholds = {
        "slowdown_temp_c": getattr(nvml, "NVML_TEMPERATURE_THRESHOLD_SLOWDOWN", 1),
        "shutdown_temp_c": getattr(nvml, "NVML_TEMPERATURE_THRESHOLD_SHUTDOWN", 0),
    }
    out = {
        "clock_max_mhz": _number(
            read(lambda: nvml.nvmlDeviceGetMaxClockInfo(handle, nvml.NVML_CLOCK_SM))
        ),
        "power_limit_w": power / 1000.0 if isinstance(power, int | float) else None,
        "pcie_width_max": _number(read(lambda: nvml.nvmlDeviceGetMaxPcieLinkWidth(handle))),
    }
    for key, which in thresholds.items():
        out[key] = _number(read(lambda w=which: nvml.nvmlDeviceGetTemperatureThreshold(handle, w)))
    return out


def counters(nvml: Any, handle: Any) -> dict[str, Any]:
    """Volatile ECC counts, row remaps and PCIe replays: value, None (not supported) or error."""

    def ecc(kind: int) -> Any:
        return read(lambda: nvml.nvmlDeviceGetTotalEccErrors(handle, kind, nvml.NVML_VOLATILE_ECC))

    remaps = read(lambda: nvml.nvmlDeviceGetRemappedRows(handle))
    if isinstance(remaps, tuple | list):
        correctable, uncorrectable, pending, _failed = remaps
        remap = {
            "remapped_rows_correctable": int(correctable),
            "remapped_rows_uncorrectable": int(uncorrectable),
            "remap_pending": int(bool(pending)),
        }
    else:  # None (before Ampere) or an error record: the same for all three
        remap = dict.fromkeys(
            ("remapped_rows_correctable", "remapped_rows_uncorrectable", "remap_pending"), remaps
        )
    return {
        "ecc_uncorrected": ecc(nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED),
        "ecc_corrected": ecc(nvml.NVML_MEMORY_ERROR_TYPE_CORRECTED),
        **remap,
        "pcie_replays": read(lambda: nvml.nvmlDeviceGetPcieReplayCounter(handle)),
    }


def _text(value: Any) -> str | None:
    if isinstance(value, bytes):
        return value.decode()
    return value if isinstance(value, str) else None


def _number(value: Any) -> float | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None
