"""Clocks, temperature, power and throttle reasons sampled while a measurement runs (NVML).

A slow figure is explained by what the GPU did meanwhile: "SM clock 1,410 MHz median (max
1,980), 87 C max, throttle: sw_thermal_slowdown". NVIDIA only (through nvidia-ml-py); other
devices report why there is no telemetry.
"""

from __future__ import annotations

import statistics
import threading
from typing import Any

from rigcheck.facts.nvidia.nvml import _optional, newest, reason_names
from rigcheck.measure.device import MeasuredDevice

INTERVAL_S = 0.05
# Reasons that say nothing about a slow figure: the GPU idles between rounds, and an
# applications clock setting is reported whenever one is set.
BENIGN = {"gpu_idle", "applications_clocks_setting"}


class Telemetry:
    """`with Telemetry(device) as t: ...` samples in a thread; `t.summary()` after."""

    def __init__(self, device: MeasuredDevice, interval_s: float = INTERVAL_S):
        self.device = device
        self.interval_s = interval_s
        self.samples: list[dict[str, Any]] = []
        self.unavailable: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Telemetry:
        if self.device.backend != "cuda" or self.device.fact.get("vendor") != "nvidia":
            self.unavailable = f"no telemetry for {self.device.backend} devices (NVML only)"
            return self
        try:
            import pynvml

            pynvml.nvmlInit()
            self._nvml = pynvml
            self._handle = pynvml.nvmlDeviceGetHandleByIndex(self.device.index)
        except Exception as exc:
            self.unavailable = f"NVML unavailable: {type(exc).__name__}: {exc}"
            return self
        self._thread = threading.Thread(target=self._sample_until_stopped, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join(timeout=5)
            self._nvml.nvmlShutdown()

    def _sample_until_stopped(self) -> None:
        while not self._stop.is_set():
            try:
                self.samples.append(read_sample(self._nvml, self._handle))
            except Exception as exc:  # a failed read must not stop the measurement
                self.unavailable = f"NVML read failed: {type(exc).__name__}: {exc}"
                return
            self._stop.wait(self.interval_s)

    def summary(self) -> dict[str, Any]:
        return summarise(self.samples, self.unavailable)


# nvidia-ml-py binds the R535 name, but R525-R530 drivers (which the classes allow, from
# 525.60.13) export only the throttle name: calling the new one raises FunctionNotFound, which
# stopped the sampling thread at its first read. `newest` falls back to the old call.
REASONS = ["nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"]


def read_sample(nvml, handle) -> dict[str, Any]:
    mask = newest(nvml, REASONS, handle)
    # A vGPU guest may not read the power draw (NotSupported): the rest of the sample stands.
    draw = _optional(nvml, lambda: nvml.nvmlDeviceGetPowerUsage(handle))
    return {
        "sm_mhz": nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_SM),
        "mem_mhz": nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_MEM),
        "temperature_c": nvml.nvmlDeviceGetTemperature(handle, nvml.NVML_TEMPERATURE_GPU),
        "power_w": None if draw is None else draw / 1000.0,
        "power_limit_w": nvml.nvmlDeviceGetEnforcedPowerLimit(handle) / 1000.0,
        "sm_max_mhz": nvml.nvmlDeviceGetMaxClockInfo(handle, nvml.NVML_CLOCK_SM),
        "throttle_reasons": reason_names(mask),
    }


def summarise(samples: list[dict[str, Any]], unavailable: str | None = None) -> dict[str, Any]:
    """Ranges over the run, and the throttle reasons seen at least once."""
    if not samples:
        return {"samples": 0, "unavailable": unavailable or "no samples (the run was too short)"}
    sm = [s["sm_mhz"] for s in samples]
    reasons = sorted({r for s in samples for r in s["throttle_reasons"]} - BENIGN)
    return {
        "samples": len(samples),
        "sm_mhz_min": min(sm),
        "sm_mhz_median": statistics.median(sm),
        "sm_max_mhz": samples[-1]["sm_max_mhz"],
        "mem_mhz_median": statistics.median(s["mem_mhz"] for s in samples),
        "temperature_c_max": max(s["temperature_c"] for s in samples),
        "power_w_max": max(
            (s["power_w"] for s in samples if s["power_w"] is not None), default=None
        ),
        "power_limit_w": samples[-1]["power_limit_w"],
        "throttle_reasons": reasons,
        "unavailable": unavailable,
    }


def explain(summary: dict[str, Any] | None) -> str:
    """One line for a failure message: what the GPU did during the run."""
    if not summary:
        return "no telemetry recorded"
    if not summary.get("samples"):
        return summary.get("unavailable") or "no telemetry recorded"
    throttle = ", ".join(summary["throttle_reasons"]) or "none"
    draw = summary["power_w_max"]
    power = "power draw not readable" if draw is None else f"{draw:.0f} W max"
    return (
        f"during the run: SM clock {summary['sm_mhz_median']:,.0f} MHz median "
        f"(min {summary['sm_mhz_min']:,}, max {summary['sm_max_mhz']:,}), "
        f"{summary['temperature_c_max']} C max, {power} of "
        f"{summary['power_limit_w']:.0f} W limit, throttle reasons: {throttle}"
    )
