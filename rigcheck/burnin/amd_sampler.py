"""AMD GPUs in the burn-in: telemetry, limits and error counters through amdsmi (libamd_smi).

The trace's columns are the NVIDIA ones, read the AMD way, so one judge reads both:
- clock_mhz / mem_clock_mhz: amdsmi_get_clock_info, GFX and MEM ("clk", "cur_clk" before 6.2);
- power_w: amdsmi_get_power_info's socket power in watts: current_socket_power, else
  average_socket_power where a GPU reports only that (0xFFFF is "not reported");
- temperature_c: the hotspot (junction) sensor, which every Instinct reports, against its
  CRITICAL limit (where the firmware slows the GPU down); hbm_temperature_c: the VRAM sensor
  where the GPU reports one (MI300X does not: NOT_SUPPORTED, a None column, not judged);
- reasons: the limits amdsmi_get_violation_status says hold the clocks down now (ROCm >= 6.3).
  "ppt_power" (package power tracking) is how an MI300X runs under a dense GEMM; the thermal
  kinds (judge.SLOWDOWN_REASONS) are the fault.
A read the loaded amdsmi release lacks is left out of the trace with the reason
(`unavailable`), never an exception; a read that fails once is a null in its column.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rigcheck.facts.amd import smi as amd_smi
from rigcheck.facts.amd.smi_releases import watts

NO_KERNEL_EVENTS = "AMD GPUs log no Xid or NVRM records (NVIDIA's driver only)"
UNSET_16 = 0xFFFF  # amdsmi_power_info_t's "not reported" (amdsmi 7 prints it as "N/A")
NO_VIOLATIONS = (
    "not available: this amdsmi has no amdsmi_get_violation_status (ROCm >= 6.3 has it); "
    "thermal, PROCHOT and HBM-thermal slowdowns are not judged, the hotspot temperature and the "
    "clocks still are"
)


def handles_by_bus(smi: Any) -> dict[str, Any]:
    """amdsmi's processor handles by PCI bus id, lower case (0000:18:00.0)."""
    return amd_smi._handles_by_bus(smi)


def unavailable(smi: Any) -> dict[str, str]:
    """The trace's columns this amdsmi release cannot read at all, and why."""
    return {} if hasattr(smi, "amdsmi_get_violation_status") else {"reasons": NO_VIOLATIONS}


def amd_reader(smi: Any, h: Any) -> Callable[[], dict[str, Any]]:
    """One GPU's clocks, power, temperatures and violation flags, each read on its own."""
    hotspot, vram, edge = (
        getattr(smi.AmdSmiTemperatureType, k) for k in ("HOTSPOT", "VRAM", "EDGE")
    )
    current = smi.AmdSmiTemperatureMetric.CURRENT
    has_violations = hasattr(smi, "amdsmi_get_violation_status")

    def read() -> dict[str, Any]:
        row = {
            "clock_mhz": _try(lambda: _clock(smi, h, smi.AmdSmiClkType.GFX)),
            "mem_clock_mhz": _try(lambda: _clock(smi, h, smi.AmdSmiClkType.MEM)),
            "power_w": _try(lambda: _power(smi, h)),
            "temperature_c": _try(lambda: _int(smi.amdsmi_get_temp_metric(h, hotspot, current))),
            "hbm_temperature_c": _try(lambda: _int(smi.amdsmi_get_temp_metric(h, vram, current))),
            "edge_temperature_c": _try(lambda: _int(smi.amdsmi_get_temp_metric(h, edge, current))),
            "pcie_width": _try(lambda: amd_smi._pcie_link(smi, h)["width_current"]),
        }
        if has_violations:
            row["reasons"] = _try(lambda: _active(smi, h))
        return row

    return read


def _clock(smi: Any, h: Any, kind: Any) -> int | None:
    info = smi.amdsmi_get_clock_info(h, kind)
    return _int(info.get("clk", info.get("cur_clk")))


def _power(smi: Any, h: Any) -> float | None:
    """Socket power in watts: the current reading where the GPU gives one, else the average."""
    info = smi.amdsmi_get_power_info(h)
    for key in ("current_socket_power", "average_socket_power"):
        value = _int(info.get(key))
        if value is not None and value not in (0, UNSET_16):
            return float(value)
    return None


def _active(smi: Any, h: Any) -> list[str]:
    """The violation kinds active now (amd_smi.VIOLATIONS' names): [] when none holds it."""
    status = amd_smi._violation(smi, h) or {"active": {}}
    return sorted(kind for kind, on in status["active"].items() if on)


def _int(value: Any) -> int | None:
    """amdsmi writes "N/A" for a value the GPU does not report."""
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _try(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception:  # NOT_SUPPORTED, a failed read: a null in the column
        return None


def limits(smi: Any, h: Any) -> dict[str, Any]:
    """What the device states: its maximum GFX clock, power cap, the hotspot's CRITICAL
    (slowdown) and EMERGENCY (shutdown) temperatures and the VRAM sensor's CRITICAL, and the
    widest PCIe link it can train."""
    hotspot, vram = smi.AmdSmiTemperatureType.HOTSPOT, smi.AmdSmiTemperatureType.VRAM
    metric = smi.AmdSmiTemperatureMetric

    def temp(sensor: Any, kind: Any) -> int | None:
        return _try(lambda: _int(smi.amdsmi_get_temp_metric(h, sensor, kind)))

    cap = _try(lambda: watts(smi.amdsmi_get_power_cap_info(h)["power_cap"]))
    return {
        "clock_max_mhz": _try(
            lambda: _int(smi.amdsmi_get_clock_info(h, smi.AmdSmiClkType.GFX)["max_clk"])
        ),
        "power_limit_w": cap,
        "pcie_width_max": _try(lambda: amd_smi._pcie_link(smi, h)["width_max"]),
        "slowdown_temp_c": temp(hotspot, metric.CRITICAL),
        "shutdown_temp_c": temp(hotspot, metric.EMERGENCY),
        "hbm_slowdown_temp_c": temp(vram, metric.CRITICAL),
    }


def counters(smi: Any, h: Any) -> dict[str, Any]:
    """ECC counts (all RAS blocks summed, as amdsmi_get_gpu_total_ecc_count gives them), HBM
    pages retired or pending retirement, and PCIe replays: value, None or error record."""
    read = amd_smi._reader(smi)
    ecc = read(lambda: amd_smi._counts(smi.amdsmi_get_gpu_total_ecc_count(h)))
    pages = read(lambda: amd_smi._bad_pages(smi, h, read))
    link = read(lambda: amd_smi._pcie_link(smi, h))
    out: dict[str, Any] = {}
    for key, name in (("uncorrectable", "ecc_uncorrected"), ("correctable", "ecc_corrected"),
                      ("deferred", "ecc_deferred")):  # fmt: skip
        out[name] = ecc[key] if isinstance(ecc, dict) and "error" not in ecc else ecc
    for status in ("retired", "pending", "unreservable"):
        good = isinstance(pages, dict) and "error" not in pages
        out[f"bad_pages_{status}"] = pages[status] if good else pages
    out["pcie_replays"] = (
        link["replays"] if isinstance(link, dict) and "error" not in link else link
    )
    return out
