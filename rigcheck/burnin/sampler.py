"""Telemetry sampled during the burn-in, into the trace's columns: NVML per GPU, psutil on CPUs.

One thread samples every device at each tick (5 Hz by default, the issue's minimum). A read that
fails is a null in its column, never an exception out of the thread; a reading the host does not
expose at all is left out and its reason recorded ("not available").
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

INTERVAL_S = 0.2


class Sampler:
    """`with Sampler(readers, t0) as s: ...`; s.columns[i] holds device i's samples."""

    def __init__(
        self, readers: list[Callable[[], dict[str, Any]]], t0: float, interval_s: float = INTERVAL_S
    ):
        self.readers, self.t0, self.interval_s = readers, t0, interval_s
        self.columns: list[dict[str, list]] = [{"t_s": []} for _ in readers]
        self.busy_s = 0.0  # time spent reading: the sampler's own cost
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="burn-in sampler", daemon=True)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        tick = time.monotonic()
        while not self._stop.is_set():
            begun = time.monotonic()
            for reader, columns in zip(self.readers, self.columns, strict=True):
                _append(columns, round(begun - self.t0, 3), _guarded(reader))
            self.busy_s += time.monotonic() - begun
            tick += self.interval_s
            self._stop.wait(max(0.0, tick - time.monotonic()))


def _guarded(reader: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    try:
        return reader()
    except Exception:  # the whole device unreadable this tick: every column null
        return {}


def _append(columns: dict[str, list], t: float, row: dict[str, Any]) -> None:
    n = len(columns["t_s"])
    columns["t_s"].append(t)
    for key in set(columns) | set(row):
        if key == "t_s":
            continue
        columns.setdefault(key, [None] * n).append(row.get(key))


# -- NVML (NVIDIA GPUs) -----------------------------------------------------------------------


def nvml_reader(nvml: Any, handle: Any) -> Callable[[], dict[str, Any]]:
    """One GPU's clocks, power, temperature and clock event reasons, each read on its own."""
    from rigcheck.facts.nvidia.nvml import newest, reason_names
    from rigcheck.measure.telemetry import REASONS

    def read() -> dict[str, Any]:
        # The binding has the R535 name whatever the driver: newest() falls back on older ones.
        mask = _try(lambda: newest(nvml, REASONS, handle))
        power = _try(lambda: nvml.nvmlDeviceGetPowerUsage(handle))
        return {
            "clock_mhz": _try(lambda: nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_SM)),
            "mem_clock_mhz": _try(lambda: nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_MEM)),
            "power_w": None if power is None else power / 1000.0,
            "temperature_c": _try(
                lambda: nvml.nvmlDeviceGetTemperature(handle, nvml.NVML_TEMPERATURE_GPU)
            ),
            "reasons": None if mask is None else reason_names(mask),
            # The width the link trained at while the load runs: idle GPUs may narrow it
            "pcie_width": _try(lambda: nvml.nvmlDeviceGetCurrPcieLinkWidth(handle)),
        }

    return read


def _try(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception:
        return None


# -- psutil (the cpu class) -------------------------------------------------------------------


def host_reader() -> tuple[Callable[[], dict[str, Any]], dict[str, str], dict[str, Any]]:
    """(reader, what is not available and why, limits) for the host's CPUs."""
    import psutil

    unavailable: dict[str, str] = {
        "power_w": "no power reading on the cpu class (psutil has none)",
        "reasons": "CPUs report no clock event reasons (NVML only)",
        "mem_clock_mhz": "no memory clock reading on the cpu class",
    }
    freq = _try(psutil.cpu_freq)
    if not freq or not freq.current:
        unavailable["clock_mhz"] = "not available: psutil.cpu_freq() reads nothing on this host"
    temps = _try(getattr(psutil, "sensors_temperatures", lambda: {})) or {}
    entries = [e for group in temps.values() for e in group if e.current]
    if not entries:
        unavailable["temperature_c"] = (
            "not available: psutil.sensors_temperatures() finds no sensor (usual in a VM)"
        )
    highs = [e.high for e in entries if e.high]
    limits = {
        "clock_max_mhz": freq.max if freq and freq.max else None,
        "power_limit_w": None,
        "slowdown_temp_c": min(highs) if highs else None,
        "shutdown_temp_c": None,
    }

    def read() -> dict[str, Any]:
        row: dict[str, Any] = {}
        if "clock_mhz" not in unavailable:
            f = _try(psutil.cpu_freq)
            row["clock_mhz"] = f.current if f else None
        if "temperature_c" not in unavailable:
            now = _try(psutil.sensors_temperatures) or {}
            values = [e.current for group in now.values() for e in group if e.current]
            row["temperature_c"] = max(values) if values else None
        return row

    return read, unavailable, limits
