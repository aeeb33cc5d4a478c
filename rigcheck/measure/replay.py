"""Recorded and synthetic measurements, replayed through the same checks instead of kernels.

A replay file (fixtures/measurements/*.json) says what it is and holds one entry per figure
and device:

    {"rigcheck_measurements": 1, "kind": "recorded" | "synthetic", "class": "h100",
     "note": "where the numbers come from",
     "measurements": [{"key": "matmul_bf16_tflops", "device": 0, "value": 781.0, ...}]}

"device" is the facts index of a GPU, or "cpu" / "mps". "value" may be a list: attempt i of
the check gets value[i] (the last repeats), which is how a retry is replayed. Any other field
of rigcheck.measure.Measurement (best, telemetry, details, ...) is passed through.
`--record-measurements FILE` writes a live session's measurements in this format.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rigcheck.jsonfile import read_json
from rigcheck.measure.measurement import Measurement

FORMAT_VERSION = 1
KINDS = ("recorded", "synthetic")


class ReplayError(Exception):
    """A replay file that cannot be used, with what is wrong in it."""


class ReplayedMeasurements:
    def __init__(self, data: dict[str, Any], source: str):
        self.source = source
        self.kind = data["kind"]
        self.entries = {(m["key"], str(m["device"])): m for m in data["measurements"]}

    def measurement(
        self, key: str, unit: str, device_ident: str, label: str, attempt: int
    ) -> Measurement:
        entry = self.entries.get((key, device_ident))
        if entry is None:
            raise ReplayError(f"no recorded measurement of {key} for {label} in {self.source}")
        values = entry["value"] if isinstance(entry["value"], list) else [entry["value"]]
        fields = {k: v for k, v in entry.items() if k not in ("device", "value")}
        fields.setdefault("unit", unit)
        fields.setdefault("definition", "no definition recorded")
        return Measurement.from_dict(
            {
                **fields,
                "device": label,
                "value": float(values[min(attempt, len(values) - 1)]),
                "origin": f"{self.kind}: {self.source}",
            }
        )


def load_replay(path: str | Path) -> ReplayedMeasurements:
    source = str(path)
    data = read_json(path, "measurements file", ReplayError)
    problem = _problem(data)
    if problem:
        raise ReplayError(f"{source}: not a rigcheck measurements file: {problem}")
    return ReplayedMeasurements(data, source)


def _problem(data: Any) -> str | None:
    if not isinstance(data, dict) or data.get("rigcheck_measurements") != FORMAT_VERSION:
        return f'expected an object with "rigcheck_measurements": {FORMAT_VERSION}'
    if data.get("kind") not in KINDS:
        return f'"kind" must be one of {", ".join(KINDS)}: say whether the numbers are real'
    entries = data.get("measurements")
    if not isinstance(entries, list):
        return '"measurements" must be a list'
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or not {"key", "device", "value"} <= set(entry):
            return f"measurements[{i}] needs key, device and value"
        values = entry["value"] if isinstance(entry["value"], list) else [entry["value"]]
        if not values or not all(isinstance(v, (int, float)) for v in values):
            return f"measurements[{i}].value must be a number or a list of numbers"
    return None


def recorded_file(
    measurements: list[tuple[str, Measurement]], class_name: str | None, note: str
) -> dict[str, Any]:
    """A live session's (device ident, measurement) pairs as a replay file (kind "recorded")."""
    return {
        "rigcheck_measurements": FORMAT_VERSION,
        "kind": "recorded",
        "class": class_name,
        "note": note,
        "measurements": [{**m.as_dict(), "device": ident} for ident, m in measurements],
    }
