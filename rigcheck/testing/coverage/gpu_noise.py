"""Healthy GPUs' variation, as public recordings of real GPUs show it: how far one GPU of a node
stands from the others (between) and how far one timed repeat stands from the next (within), per
kind of figure (matmul_*, device_*). fixtures/measurements/gpu-variation/variation.json holds the
recordings with their sources (tools/gpu_variation.py writes it from the files in sources/) and
says, per class, which recordings its noise comes from and why where it borrows another GPU's.

Both spreads are kept as relative times (a figure is its work over a time): 1.05 is a GPU or a
repeat 5% slower than the recording's median. A recording of several GPUs is taken run by run,
each run against its own median (two matrices of one tool need not share a level); a recording of
one GPU's repeats against the median of all of them.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from rigcheck.layout import ROOT_DIR

VARIATION = Path(ROOT_DIR) / "fixtures" / "measurements" / "gpu-variation" / "variation.json"
SOURCE_FIELDS = ("url", "repo", "path")


@dataclass(frozen=True)
class Spread:
    between: tuple[float, ...]  # one GPU's relative time against its node's median
    within: tuple[float, ...]  # one repeat's relative time against its GPU's own level
    origin: str  # which recordings, and why where borrowed


def problem(data: Any) -> str | None:
    """What makes a variation file unusable, or None: a record without its source, without
    figures, or a class drawing from a record the file does not hold."""
    if not isinstance(data, dict) or data.get("rigcheck_gpu_variation") != 1:
        return "not a rigcheck GPU variation file (rigcheck_gpu_variation: 1)"
    ids = set()
    for record in data.get("records") or []:
        name = record.get("id", "?")
        source = record.get("source") or {}
        missing = [f for f in SOURCE_FIELDS if not source.get(f)]
        if missing:
            return f"record {name!r} has no source {'/'.join(missing)}: say where it was recorded"
        if not record.get("runs") or not all(isinstance(r, dict) and r for r in record["runs"]):
            return f"record {name!r} holds no figures"
        ids.add(name)
    for cls, kinds in (data.get("classes") or {}).items():
        for kind, pick in kinds.items():
            unknown = [r for r in pick.get("between", []) + pick.get("within", []) if r not in ids]
            if unknown or not pick.get("why"):
                return (
                    f"class {cls!r} {kind}: draws from {unknown or 'no'} record(s) the file lacks"
                )
    return None


def load(path: Path = VARIATION) -> dict[str, Any]:
    data = json.loads(path.read_text())
    found = problem(data)
    if found:
        raise ValueError(f"{path.name}: {found}")
    return data


@cache
def _data() -> dict[str, Any]:
    return load()


def classes() -> list[str]:
    return sorted(_data()["classes"])


def relative(record: dict[str, Any]) -> dict[str, list[float]]:
    """GPU -> its figures as fractions of their reference median (see the module's docstring)."""
    runs = record["runs"]
    one_gpu = all(len(run) == 1 for run in runs)
    whole = statistics.median(v for run in runs for v in run.values())
    found: dict[str, list[float]] = {}
    for run in runs:
        median = whole if one_gpu else statistics.median(run.values())
        for gpu, value in run.items():
            found.setdefault(gpu, []).append(value / median)
    return found


@cache
def spread(cls: str, kind: str) -> Spread:
    """The class's healthy spread of a kind of figure (matmul, device); a class or kind the file
    does not cover is an error, never another class's noise taken silently."""
    data = _data()
    pick = (data["classes"].get(cls) or {}).get(kind)
    if pick is None:
        raise ValueError(f"no recorded GPU variation of a {kind} figure for class {cls!r}")
    records = {r["id"]: r for r in data["records"]}
    between, within = [], []
    for name in pick["between"]:
        for values in relative(records[name]).values():
            between.append(1 / statistics.fmean(values))
    for name in pick["within"]:
        for values in relative(records[name]).values():
            level = statistics.fmean(values)
            within += [level / v for v in values] if len(values) > 1 else []
    return Spread(tuple(between), tuple(within), pick["why"])
