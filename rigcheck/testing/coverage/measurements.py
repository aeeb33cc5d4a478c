"""A node's timed measurements for the tiers that run them, as a replay file
(rigcheck/measure/replay.py): each figure at its class's level, varied by the noise of real
repeated timings, and slowed by the factor a fault's signature gives.

The noise is the only one the project has recorded: the CI machine's five timed repeats of each
figure (fixtures/measurements/cpu-ci-recorded.json, `pytest --record-measurements`). A figure is
its work over the median repeat time, so a rerun's figure is the level over the median of five
repeats drawn from those (a bootstrap); a fault that slows the kernel by a factor multiplies its
repeat times. The CI machine shares 2 cores with other jobs: its noise is wider than an idle
GPU's, so the false-fail rate it gives is an upper estimate.

Levels: cpu's are recorded on the CI machine, h100's are fixtures/measurements/h100-synthetic.json
(public MAMF figures, one hand-written copy figure). a100_40gb, b200 and mi300x have no such file:
their level is the class's own "achievable" figure (expected/CLASS.json, each citing the public
run it comes from) for the figures whose kind has recorded repeats (matmul_*, device_*); a figure
with no achievable value, or of a kind never timed here (h2d, attention...), is not replayed, and
the campaign lists it as not judged rather than invent a level or a noise for it.
"""

from __future__ import annotations

import json
import random
import statistics
from functools import cache
from pathlib import Path
from typing import Any

from rigcheck.layout import ROOT_DIR
from rigcheck.spec import load_spec

FOLDER = Path(ROOT_DIR) / "fixtures" / "measurements"
NOISE = FOLDER / "cpu-ci-recorded.json"
# The figures each class's nodes replay: recorded on the machine (cpu), or the synthetic file's
# levels, which cite public figures where there are some (h100).
LEVELS = {"cpu": FOLDER / "cpu-ci-recorded.json", "h100": FOLDER / "h100-synthetic.json"}
# Classes whose levels are their spec's achievable figures (see the module's docstring).
SPEC_LEVELS = ("a100_40gb", "b200", "mi300x")
ATTEMPTS = 2  # a figure under its floor is measured again (rigcheck/measure/check.py)
REPEATS = 5  # timed repeats per figure, as the recorded run timed them


@cache
def relative_repeats() -> dict[str, tuple[float, ...]]:
    """figure key -> its recorded repeat times over their median."""
    data = json.loads(NOISE.read_text())
    found = {}
    for m in data["measurements"]:
        median = statistics.median(m["samples_s"])
        found[m["key"]] = tuple(t / median for t in m["samples_s"])
    return found


def repeats_for(key: str) -> tuple[float, ...]:
    """The recorded repeats of this figure, else of its kind (matmul_*, device_*)."""
    recorded = relative_repeats()
    if key in recorded:
        return recorded[key]
    kind = key.split("_")[0]
    pool = [t for k, times in recorded.items() if k.split("_")[0] == kind for t in times]
    if not pool:
        raise ValueError(f"no recorded repeats of a {kind} figure to draw {key}'s noise from")
    return tuple(pool)


def rerun(level: float, key: str, factor: float, rng: random.Random) -> float:
    """The figure of one run: the level over the median of five repeats drawn from the recorded
    ones, each `factor` times as long."""
    times = repeats_for(key)
    return level / statistics.median(factor * rng.choice(times) for _ in range(REPEATS))


def replay_file(cls: str, devices: list[str], slow: dict[str, list[tuple[str, float]]],
                rng: random.Random) -> dict[str, Any]:  # fmt: skip
    """The class's figures for each device ("cpu" or a GPU's index), each drawn anew; `slow`:
    device -> [(figure prefix, factor)] from the node's signatures."""
    kind, levels, origin = class_levels(cls)
    entries = []
    for device in devices:
        for key, level in levels.items():
            factor = 1.0
            for prefix, by in slow.get(device, []):
                factor *= by if key.startswith(prefix) else 1.0
            values = [rerun(level, key, factor, rng) for _ in range(ATTEMPTS)]
            entries.append({"key": key, "device": device, "value": values})
    note = f"coverage campaign: the levels of {origin}, noise of {NOISE.name}"
    return {"rigcheck_measurements": 1, "kind": kind, "class": cls, "note": note,
            "measurements": entries}  # fmt: skip


@cache
def class_levels(cls: str) -> tuple[str, dict[str, float], str]:
    """(replay kind, figure key -> level, where the levels come from) for a class."""
    if cls in LEVELS:
        data = json.loads(LEVELS[cls].read_text())
        return data["kind"], {m["key"]: m["value"] for m in data["measurements"]}, LEVELS[cls].name
    timed = {key.split("_")[0] for key in relative_repeats()}
    levels = {
        key: figure["achievable"]["value"]
        for key, figure in load_spec(cls).data["figures"].items()
        if (figure.get("achievable") or {}).get("value") and key.split("_")[0] in timed
    }
    return "synthetic", levels, f"expected/{cls}.json's achievable figures"


def has_measurements(cls: str) -> bool:
    return cls in LEVELS or cls in SPEC_LEVELS


def measured_classes() -> list[str]:
    return sorted([*LEVELS, *SPEC_LEVELS])
