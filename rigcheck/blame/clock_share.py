"""The share of the job's time each clock-event reason held a GPU's clocks down: NVML's
cumulative nanosecond counters (rigcheck/facts/nvidia/clock_event_time.py) in the start facts
and in the facts now, over the wall time between the two snapshots.

Thermal slowdowns and the power brake are the machine's doing: holding a GPU for MIN_SHARE of
the job is a cause. The power cap and sync boost are how a loaded GPU normally runs: their share
is said as evidence, never blamed on its own. A driver that does not count is said too.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

MIN_SHARE = 0.05  # 5 % of the job's time at half clock or less is a slower rank, not noise
BLAMED = ("clocks_event_reason_hw_therm_slowdown", "clocks_event_reason_hw_power_brake_slowdown",
          "clocks_event_reason_sw_therm_slowdown", "perf_policy_thermal")  # fmt: skip
PREFIX = ("clocks_event_reason_", "perf_policy_")


def shares(before: dict[str, Any] | None, after: dict[str, Any]) -> dict[Any, dict[str, float]]:
    """{GPU index: {reason: share of the time between the snapshots}}; {} without both."""
    elapsed = _at(after) - _at(before) if before else float("nan")
    if not math.isfinite(elapsed) or elapsed <= 0:
        return {}
    old = {d.get("index"): d.get("clock_event_time_ns") for d in _devices(before)}
    found = {}
    for device in _devices(after):
        now, was = device.get("clock_event_time_ns"), old.get(device.get("index"))
        if isinstance(now, dict) and isinstance(was, dict):
            found[device.get("index")] = {
                name: (value - was[name]) / 1e9 / elapsed
                for name, value in now.items()
                if _count(value) and _count(was.get(name)) and value >= was[name]
            }  # a counter that went down: the driver reloaded, the time is unknown
    return found


def clock_causes(before: dict[str, Any] | None, after: dict[str, Any]) -> list[tuple[int, str]]:
    """(GPU index, detail) for each GPU a machine reason held down for MIN_SHARE of the job."""
    found = []
    for index, by_reason in shares(before, after).items():
        held = {r: s for r, s in by_reason.items() if r in BLAMED and s >= MIN_SHARE}
        if held:
            found.append(
                (index, f"GPU {index}: clocks held down by {_said(held)} of the job's time")
            )
    return found


def clock_note(before: dict[str, Any] | None, after: dict[str, Any], gpu: str | None) -> str:
    """The suspect GPU's clock-event time, in words: shares, or why there are none."""
    device = next(
        (d for d in _devices(after) if gpu in (str(d.get("index")), str(d.get("uuid")))), None
    )
    if device is None:
        return ""
    name = f"GPU {device.get('index')}"
    if "clock_event_time_ns" not in device:
        return f"{name}: no clock-event time in these facts"
    if device["clock_event_time_ns"] is None:
        return f"{name}: its driver counts no clock-event time (NVML: not supported)"
    by_reason = shares(before, after).get(device.get("index"))
    if by_reason is None:
        return f"{name}: clock-event time share needs the job's start facts"
    held = {r: s for r, s in by_reason.items() if s >= 0.005}
    return f"{name} clock-event time: {_said(held) if held else 'none'} of the job's time"


def _said(held: dict[str, float]) -> str:
    ordered = sorted(held.items(), key=lambda item: -item[1])
    return ", ".join(f"{_short(r)} {s:.0%}" for r, s in ordered)


def _short(reason: str) -> str:
    return next((reason[len(p) :] for p in PREFIX if reason.startswith(p)), reason)


def _at(facts: dict[str, Any]) -> float:
    text = (facts.get("origin") or {}).get("collected_at")
    try:
        return dt.datetime.fromisoformat(text).timestamp()
    except (TypeError, ValueError):
        return float("nan")


def _devices(facts: dict[str, Any] | None) -> list[dict[str, Any]]:
    devices = (facts or {}).get("devices")
    return [d for d in devices if isinstance(d, dict)] if isinstance(devices, list) else []


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
