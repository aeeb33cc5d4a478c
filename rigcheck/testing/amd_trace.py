"""MI300X burn-in traces recorded the way a live run records them: each tick, rigcheck's AMD
reader (rigcheck/burnin/amd_sampler.py) reads every GPU through the real amdsmi package over
the simulated libamd_smi (rigcheck/testing/amdsmi_sim), whose answers follow a load timeline.

What is real and what is not:
- the idle and limit answers are the MI300X platform profile's (public rocm-smi/amd-smi
  outputs, cited in profiles/mi300x_8gpu.json): 2,100 MHz maximum GFX clock, 750 W cap,
  hotspot CRITICAL 100 C / EMERGENCY 110 C;
- the clock collapse is ROCm/legacy-rocm-build#4414's eight MI300X under full load: SCLK
  56-59 MHz, ~155 W, 48-51 C junction, GPU% 100, cap 750 W;
- the healthy load itself is SYNTHETIC: no public recording of an MI300X under a sustained
  GEMM was found (searched: GitHub issues and public pages for amd-smi monitor / rocm-smi under
  load). Its shape follows what AMD documents (a GPU at its power cap shows PPT violation:
  gpu-violations.html) with invented figures: power at 750 W less 0-12 W, a sustained GFX
  clock of 1,700-1,860 MHz (each GPU its own), the hotspot rising from 39 C to 70-80 C, the
  GEMM at ~600 TFLOP/s bf16 scaled by the clock. The origin says so.
"""

from __future__ import annotations

import bisect
import copy
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rigcheck.burnin import amd_sampler as amd
from rigcheck.burnin.sampler import _append
from rigcheck.testing.amdsmi_sim import import_amdsmi
from rigcheck.testing.amdsmi_sim.node import Node
from rigcheck.testing.amdsmi_sim.profiles import load_profile
from rigcheck.testing.synthetic_trace import header

NOTE = (
    "simulated: rigcheck's AMD reader through the real amdsmi over the simulated libamd_smi "
    "(rigcheck/testing/amd_trace.py); idle answers and limits from public MI300X outputs, the "
    "load timeline synthetic (no MI300X GEMM recording found)"
)
NAME = "AMD Instinct MI300X"
BUS_IDS = ["0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
           "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"]  # fmt: skip
CAP_W, IDLE_W, IDLE_C, TFLOPS = 750, 191, 39, 600.0
CHECKSUM = 0x2E3D4C5B6A7F
# ROCm/legacy-rocm-build#4414: an MI300X under full load stuck at ~59 MHz, ~157 W, ~50 C.
COLLAPSED = {"clock": 59, "power": 157, "hotspot": 50}


@dataclass(frozen=True)
class Fault:
    """One GPU's fault from `onset_s`: "thermal", "power_brake", "clock_collapse" or "ecc"."""

    kind: str
    gpu: int
    onset_s: float = 10.0


@dataclass
class Reading:
    """What one GPU's libamd_smi answers at one moment of the run."""

    clock: int
    power: int
    hotspot: int
    mem_clock: int
    active: tuple[str, ...] = ()  # amdsmi_violation_status_t kinds (amd_smi.VIOLATIONS' names)


def healthy(rng: random.Random) -> Callable[[float, bool], Reading]:
    """One healthy GPU's timeline: at its power cap under the GEMM (PPT active), cool."""
    sustained, hot = rng.randint(1700, 1860), rng.uniform(70, 80)

    def at(t: float, gemm: bool) -> Reading:
        if not gemm:  # the memory phase: bandwidth-bound, below the cap
            return Reading(2100, 430 + rng.randint(0, 20), round(hot - 6), 1300)
        power = min(CAP_W, IDLE_W + int(t * 200)) - rng.randint(0, 12)
        at_cap = power >= CAP_W - 12
        hotspot = round(IDLE_C + (hot - IDLE_C) * min(1.0, t / 60) + rng.random())
        clock = sustained + rng.randint(-20, 20) if at_cap else 2100
        return Reading(clock, power, hotspot, 1300, ("ppt_power",) if at_cap else ())

    return at


def _faulty(base: Callable[[float, bool], Reading], fault: Fault) -> Callable:
    def at(t: float, gemm: bool) -> Reading:
        r = base(t, gemm)
        if t < fault.onset_s or fault.kind == "ecc":
            return r
        if fault.kind == "thermal":  # the cooling cannot carry the load: hot, clocked down
            return Reading(r.clock // 2, int(r.power * 0.6), 101, r.mem_clock,
                           ("prochot", "socket_thermal"))  # fmt: skip
        if fault.kind == "power_brake":  # held far below its cap, and no limit says why
            return Reading(int(r.clock * 0.55), min(r.power, 420), r.hotspot - 10, r.mem_clock)
        if fault.kind == "clock_collapse":
            c = COLLAPSED
            return Reading(c["clock"], c["power"], c["hotspot"], r.mem_clock)
        raise ValueError(f"unknown fault {fault.kind!r}")

    return at


def _answer(device: dict[str, Any], r: Reading) -> None:
    """Write one moment's readings where libamd_smi's answers come from (the profile)."""
    device["clock"]["GFX"].update(clk=r.clock, cur_clk=r.clock)
    device["clock"]["MEM"].update(clk=r.mem_clock, cur_clk=r.mem_clock)
    device["power_info"].update(socket_power=r.power, current_socket_power=r.power)
    device["temperature"]["HOTSPOT"]["CURRENT"] = r.hotspot
    for kind, field in amd.amd_smi.VIOLATIONS.items():
        on = kind in r.active
        device["violation"][f"active_{field}"] = int(on)
        device["violation"][f"per_{field}"] = 100 if on else 0


def _ecc(device: dict[str, Any], errors: int) -> None:
    """Uncorrectable errors in the HBM controller's RAS block, and in the total that sums them."""
    device["ecc_blocks"]["UMC"]["uncorrectable_count"] += errors
    device["ecc_total"]["uncorrectable_count"] += errors


def record(
    gpus: int = 8,
    faults: tuple[Fault, ...] = (),
    duration_s: float = 180.0,
    interval_s: float = 1.0,
    release: Path | None = None,
    seed: int = 13,
    bus_ids: list[str] | None = None,
) -> dict[str, Any]:
    """A burn-in trace of an MI300X node; `release`: another amdsmi package's folder."""
    rng = random.Random(seed)
    profile = load_profile("mi300x_8gpu")
    buses = (bus_ids or BUS_IDS)[:gpus]
    devices = [{**copy.deepcopy(profile["device"]), "bdf": bus} for bus in buses]
    node = Node(devices, lib_version=profile["lib_version"])
    smi = import_amdsmi(node, release)
    smi.amdsmi_init()
    handles = [amd.handles_by_bus(smi)[bus] for bus in buses]
    timelines = [healthy(rng) for _ in buses]
    for f in faults:
        timelines[f.gpu] = _faulty(timelines[f.gpu], f)
    gemm_end = duration_s * 5 / 6  # as header() splits the phases
    entries = [
        _entry(i, bus, smi, h) for i, (bus, h) in enumerate(zip(buses, handles, strict=True))
    ]
    readers = [amd.amd_reader(smi, h) for h in handles]
    columns: list[dict[str, list]] = [{"t_s": []} for _ in buses]
    ticks = [round(k * interval_s, 3) for k in range(int(duration_s / interval_s) + 1)]
    for t in ticks:
        for f in faults:
            if f.kind == "ecc" and t == _first_tick_after(ticks, f.onset_s):
                _ecc(devices[f.gpu], rng.randint(1, 8))
        for device, timeline, reader, column in zip(
            devices, timelines, readers, columns, strict=True
        ):
            _answer(device, timeline(t, t <= gemm_end))
            _append(column, t, reader())
    for entry, column, h in zip(entries, columns, handles, strict=True):
        entry.update(samples=column, counters_after=amd.counters(smi, h))
        entry.update(windows=_windows(column, gemm_end), memory_test=_memory_test())
    smi.amdsmi_shut_down()
    trace = header("mi300x", "rocm", duration_s, interval_s, NOTE)
    no_events = {"error": amd.NO_KERNEL_EVENTS}
    trace.update(devices=entries, events={"xid": no_events, "nvrm": dict(no_events)},
                 unavailable=amd.unavailable(smi))  # fmt: skip
    return trace


def _first_tick_after(ticks: list[float], onset: float) -> float:
    return next(t for t in ticks if t >= onset)


def _entry(i: int, bus: str, smi: Any, h: Any) -> dict[str, Any]:
    return {"id": f"gpu{i}", "index": i, "name": NAME, "bus_id": bus,
            "limits": amd.limits(smi, h), "counters_before": amd.counters(smi, h)}  # fmt: skip


def _windows(samples: dict[str, list], gemm_end: float) -> dict[str, list]:
    """One GEMM window a second, its rate following the GPU's sampled clock."""
    times = [float(t) for t in range(1, int(gemm_end) + 1)]
    rate = [TFLOPS * (_at(samples, t) or 0) / 1780 for t in times]
    return {
        "t_s": times,
        "tflops": [round(v, 2) for v in rate],
        "checksum": [CHECKSUM for _ in times],
        "checks": [20 for _ in times],
        "mismatches": [0 for _ in times],
    }


def _at(samples: dict[str, list], t: float) -> Any:
    """The last clock sampled at or before t."""
    k = bisect.bisect_right(samples["t_s"], t) - 1
    return samples["clock_mhz"][max(k, 0)]


def _memory_test() -> dict[str, Any]:
    free = 190 * 2**30
    return {"bytes_free": free, "bytes_tested": int(free * 0.9) // 4 * 4,
            "passes": ["walking_ones", "random"], "errors": 0, "first_error": None}  # fmt: skip
