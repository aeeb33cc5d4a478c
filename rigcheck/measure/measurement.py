"""Measurement: one figure measured on one device, with what it counts and how it was timed."""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Measurement:
    """A judged figure (from the median time) and the evidence behind it."""

    key: str  # the spec figure it is judged against, e.g. "matmul_bf16_tflops"
    device: str  # the device as messages name it: "GPU 0 (0000:18:00.0)", "cpu"
    value: float  # work / median time per call: the figure that is judged
    unit: str
    definition: str  # what is counted, e.g. "2*m*n*k / time, 8192x8192x8192 bf16"
    best: float | None = None  # work / fastest call: what the machine can do at best
    samples_s: list[float] = field(default_factory=list)  # seconds per call, one per round
    details: dict[str, Any] = field(default_factory=dict)  # shapes, bytes, dtype, calls/round
    telemetry: dict[str, Any] | None = None  # clocks, temperature, throttling during the run
    wall_s: float | None = None  # wall time of the whole measurement, set-up included
    origin: str = "live"  # "live", or where a replayed figure came from

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Measurement:
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in known})


def rates(work: float, samples_s: list[float]) -> tuple[float, float]:
    """(median rate, best rate) for `work` units done once per sample."""
    if not samples_s or min(samples_s) <= 0:
        raise ValueError(f"no usable timings: {samples_s!r}")
    return work / statistics.median(samples_s), work / min(samples_s)


def coefficient_of_variation(values: list[float]) -> float:
    """stdev / mean: how much repeated figures disagree (0.02 = 2%)."""
    if len(values) < 2:
        return 0.0
    return statistics.stdev(values) / statistics.fmean(values)
