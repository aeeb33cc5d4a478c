"""The acceptance tier's burn-in for a campaign node: a trace as rigcheck.burnin.record saves one,
judged by the real reader (--burn-in-trace), and the faults that show only under minutes of load,
written into it the way the recorder would have seen them, with their onset during the run.

A cpu node replays the trace the project recorded on its CI machine (fixtures/burnin/cpu-ci.json).
An MI300X node's trace is read through the real amdsmi over the simulated libamd_smi
(coverage/amd_burnin.py: public MI300X answers, a synthetic load timeline). For NVIDIA nodes:
No GPU trace has been recorded: a GPU node's trace is the project's synthetic H100 trace
(rigcheck/testing/synthetic_trace.py, invented figures, not read from a machine) fitted to the
node: one device per GPU its facts list, at the node's bus ids, with the board's clock ceiling,
power limit and slowdown temperature as the node's NVML answers them, its clocks and power scaled
from the H100's to them. So the acceptance tier's burn-in false-fail rate here measures that
synthetic trace, not a real node's variation; what the campaign measures is which check reads
each fault's shape. (The standard tier's measurements under it do vary as real GPUs do:
measurements.py, gpu_noise.py.)

Public GPU telemetry under sustained load was searched for to replace it (nvidia-smi dmon and
--query-gpu logs, DCGM dmon, gpu-burn and gpu-fryer logs in issue threads and repositories). The
one long recording found, NVIDIA H100 PCIe power and SM clock sampled every few ms during
cuBLASLt GEMMs (github.com/yqg9651/cuda_test, cuBLASLt_h100/), does not stand for a healthy
node's burn-in: it is the 350 W PCIe part, not an SXM class modelled here, its minutes-long
loads use all-zero inputs or inputs made for maximum power ("maxpower"), or hold the clock
(period_lgc.csv: 1,200-1,245 MHz), and its random-input run loads the GPU for 2.5 s. An
8 x A100 gpu_burn log (microsoft/superbenchmark tests/data/gpu_burn.log) has temperatures and
rates but spans seconds and no clocks or power.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from rigcheck.layout import ROOT_DIR
from rigcheck.testing import synthetic_trace as synthetic
from rigcheck.testing.coverage import amd_burnin

CPU_TRACE = Path(ROOT_DIR) / "fixtures" / "burnin" / "cpu-ci.json"
# The NVML readings a GPU's trace takes from the node (the facts' device record).
H100 = {"clock": synthetic.CLOCK_MAX, "power": synthetic.POWER_LIMIT}
# One sample a second over the synthetic trace's 180 s (the recorder samples every 0.2 s): a
# fifth of the judging time per node, and every fault here lasts tens of seconds.
SAMPLE_S = 1.0
DURATION_S = 180.0  # the synthetic trace's
# Classes whose acceptance tier cannot be measured here, and why (none since the MI300X's
# burn-in reads amdsmi: rigcheck/burnin/amd_sampler.py).
NOT_MEASURABLE: dict[str, str] = {}


def healthy_trace(
    cls: str, devices: list[dict[str, Any]], rng: random.Random | None = None
) -> dict[str, Any]:
    """The node's burn-in trace when nothing is wrong with it."""
    if cls == "cpu":
        return json.loads(CPU_TRACE.read_text())
    if cls in amd_burnin.CLASSES:
        rng = rng or random.Random(0)
        return amd_burnin.healthy_trace(cls, devices, rng, DURATION_S, SAMPLE_S)
    trace = synthetic.good_trace(gpus=len(devices), interval_s=SAMPLE_S)
    trace["class"] = cls
    trace["origin"]["note"] += "; fitted to a coverage campaign's node (coverage/acceptance.py)"
    for record, device in zip(trace["devices"], devices, strict=True):
        _fit(record, device)
    return trace


def _fit(record: dict[str, Any], device: dict[str, Any]) -> None:
    """The H100 trace's device as this node's GPU: its name, bus, limits, clocks and power."""
    clock_max = _number(device, "clocks.sm_max_mhz") or H100["clock"]
    power = _number(device, "power.limit_w") or H100["power"]
    slowdown = _number(device, "temperature_thresholds.slowdown_c") or synthetic.SLOWDOWN_C
    bus = _text(device, "pci.bus_id") or record["bus_id"]  # a lost GPU answers no bus id
    record["name"], record["bus_id"] = _text(device, "name") or record["name"], bus
    record["limits"].update(clock_max_mhz=clock_max, power_limit_w=power,
                            slowdown_temp_c=slowdown)  # fmt: skip
    samples = record["samples"]
    samples["clock_mhz"] = [round(v * clock_max / H100["clock"]) for v in samples["clock_mhz"]]
    samples["power_w"] = [v * power / H100["power"] for v in samples["power_w"]]
    cooler = slowdown - synthetic.SLOWDOWN_C  # as far under its own threshold as the H100's
    samples["temperature_c"] = [t + min(0, cooler) for t in samples["temperature_c"]]


def _get(device: dict[str, Any], path: str) -> Any:
    value: Any = device
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _number(device: dict[str, Any], path: str) -> float | None:
    value = _get(device, path)
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _text(device: dict[str, Any], path: str) -> str | None:
    value = _get(device, path)
    return value if isinstance(value, str) else None


def _onset(trace: dict[str, Any], rng: random.Random) -> float:
    """A moment in the GEMM phase after its first minute (the throughput check's baseline)."""
    gemm = next(p for p in trace["phases"] if p["name"] == "gemm")
    return float(rng.randint(70, int(gemm["end_s"]) - 20))


def _slowdown(trace: dict, sig: dict, rng: random.Random) -> bool:
    """From its onset one GPU runs at a fraction of its clock, held by the signature's reasons
    (NVML's clock event reasons, as the recorder samples them), its GEMM rate falling with it."""
    device = rng.choice(trace["devices"])
    start, factor = _onset(trace, rng), sig["factor"]
    s = device["samples"]
    for k, t in enumerate(s["t_s"]):
        if t >= start and s["reasons"][k]:  # under load (idle samples carry no reason)
            s["reasons"][k] = sorted(set(s["reasons"][k]) | set(sig["reasons"]))
            s["clock_mhz"][k] = int(s["clock_mhz"][k] * factor)
            s["power_w"][k] *= factor
            if sig.get("hot"):
                s["temperature_c"][k] = device["limits"]["slowdown_temp_c"] + 1
    w = device["windows"]
    w["tflops"] = [
        v * (factor if t >= start else 1) for t, v in zip(w["t_s"], w["tflops"], strict=True)
    ]
    return True


def _xid(trace: dict, sig: dict, rng: random.Random) -> bool:
    """The kernel logs the Xid mid-run, against one GPU's bus id (as the recorder reads it)."""
    device = rng.choice(trace["devices"])
    trace["events"]["xid"].append({"t_s": _onset(trace, rng), "code": sig["code"],
                                   "device": device["bus_id"], "text": sig["text"]})  # fmt: skip
    return True


def _wrong_result(trace: dict, sig: dict, rng: random.Random) -> bool:
    """One GEMM window of one GPU disagrees with its reference result."""
    windows = rng.choice(trace["devices"])["windows"]
    late = [k for k, t in enumerate(windows["t_s"]) if t >= _onset(trace, rng)]
    windows["mismatches"][rng.choice(late)] = rng.randint(1, 3)
    return True


def _memory_error(trace: dict, sig: dict, rng: random.Random) -> bool:
    """One word of one GPU's memory reads back with a bit flipped in the pattern test."""
    test = rng.choice(trace["devices"])["memory_test"]
    bit = 1 << rng.randint(0, 31)
    offset = rng.randrange(0, test["bytes_tested"], 4)
    test["errors"] = 1
    test["first_error"] = {"pattern": "walking_ones", "offset_bytes": offset,
                           "expected": 0x400, "found": 0x400 ^ bit}  # fmt: skip
    return True


def _amd(trace: dict, sig: dict, rng: random.Random) -> bool:
    """A fault libamd_smi answers from its onset, read through amdsmi (coverage/amd_burnin.py)."""
    return trace["backend"] == "rocm" and amd_burnin.inject(trace, sig, rng, _onset(trace, rng))


INJECT = {
    "amd_burnin": _amd,
    "burnin_slowdown": _slowdown,
    "burnin_xid": _xid,
    "burnin_wrong_result": _wrong_result,
    "burnin_memory_error": _memory_error,
}


def inject(trace: dict[str, Any], signature: dict[str, Any], rng: random.Random) -> bool:
    if not trace["devices"] or trace["backend"] == "cpu":
        return False  # the recorded cpu trace is replayed as it was
    return INJECT[signature["kind"]](trace, signature, rng)
