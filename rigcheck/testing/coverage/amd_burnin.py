"""The acceptance tier's burn-in on an MI300X campaign node: a trace recorded by rigcheck's AMD
reader through the real amdsmi over the simulated libamd_smi (rigcheck/testing/amd_trace.py),
and each burn-in fault written below amdsmi, into what libamd_smi answers from its onset.

Healthy variation: each node's GPUs are drawn from a pool of 16 GPUs recorded once per
campaign, each with its own sustained clock, hotspot and per-sample noise. That load timeline
is SYNTHETIC (no public recording of an MI300X under a sustained GEMM was found); the idle
answers, limits and the clock collapse are public MI300X outputs (amd_trace.py says which).
So the false-fail rate here measures the synthetic timeline, and the detection which check
reads each fault's shape through the real binding.
"""

from __future__ import annotations

import copy
import random
from functools import cache
from typing import Any

from rigcheck.testing import amd_trace

CLASSES = {"mi300x"}
POOL_SEEDS = (1, 2)  # two 8-GPU recordings: 16 GPUs to draw a node's from


@cache
def _pool(duration_s: float, interval_s: float) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the trace's header, the recorded GPUs): recorded once, ~2.6 s a recording."""
    traces = [amd_trace.record(gpus=8, duration_s=duration_s, interval_s=interval_s, seed=s)
              for s in POOL_SEEDS]  # fmt: skip
    return traces[0], [d for t in traces for d in t["devices"]]


def healthy_trace(
    cls: str, devices: list[dict[str, Any]], rng: random.Random, duration_s: float,
    interval_s: float,
) -> dict[str, Any]:  # fmt: skip
    """The node's trace: one pool GPU per GPU its facts list, at that GPU's bus id."""
    header, pool = _pool(duration_s, interval_s)
    trace = {k: copy.deepcopy(v) for k, v in header.items() if k != "devices"}
    trace["class"] = cls
    trace["origin"]["note"] += "; a coverage campaign's node (coverage/amd_burnin.py)"
    picks = rng.sample(range(len(pool)), len(devices))
    trace["devices"] = [
        _placed(pool[k], i, d) for i, (k, d) in enumerate(zip(picks, devices, strict=True))
    ]
    return trace


def _placed(recorded: dict[str, Any], i: int, device: dict[str, Any]) -> dict[str, Any]:
    """A pool GPU as the node's i-th: its id, name and bus id (a lost GPU answers none)."""
    placed = copy.deepcopy(recorded)
    bus = (device.get("pci") or {}).get("bus_id")
    placed.update(id=f"gpu{i}", index=i, name=device.get("name") or placed["name"])
    placed["bus_id"] = bus if isinstance(bus, str) else placed["bus_id"]
    return placed


def inject(
    trace: dict[str, Any], signature: dict[str, Any], rng: random.Random, onset: float
) -> bool:
    """One GPU recorded again with the fault answered by libamd_smi from `onset`: its samples,
    GEMM rate and counters are what rigcheck's reader reads of that GPU."""
    device = rng.choice(trace["devices"])
    fault = amd_trace.Fault(signature["fault"], 0, onset)
    again = amd_trace.record(gpus=1, faults=(fault,), duration_s=trace["duration_s"],
                             interval_s=trace["interval_s"], seed=rng.randrange(2**31),
                             bus_ids=[device["bus_id"]])["devices"][0]  # fmt: skip
    for key in ("limits", "samples", "windows", "counters_before", "counters_after"):
        device[key] = again[key]
    return True
