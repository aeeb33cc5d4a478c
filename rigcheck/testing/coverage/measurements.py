"""A node's timed measurements for the tiers that run them, as a replay file
(rigcheck/measure/replay.py): each figure at its class's level, varied by real healthy variation,
and slowed by the factor a fault's signature gives.

A figure is its work over the median of five timed repeats, so a rerun's figure is the level over
the median of five repeat times drawn from recorded ones (a bootstrap); a fault that slows the
kernel by a factor multiplies its repeat times.

Where the variation comes from:
- cpu: the CI machine's own five timed repeats of each figure (fixtures/measurements/
  cpu-ci-recorded.json, `pytest --record-measurements`). The CI machine shares 2 cores with other
  jobs: its noise is wider than an idle machine's, so the false-fail rate it gives is an upper
  estimate.
- GPU classes: public recordings of real GPUs (gpu_noise.py, fixtures/measurements/gpu-variation/,
  each with its source): every GPU of a node draws its own offset from the recorded spread between
  healthy GPUs of one node (a slower part stays slower in every figure of a kind), and each repeat
  from the recorded spread between repeats on one GPU. Which class borrows another GPU's spread,
  and why, is in variation.json's "classes". A GPU class the file does not cover is an error, not
  the CPU's noise.

Levels: cpu's are recorded on the CI machine, h100's are fixtures/measurements/h100-synthetic.json
(public MAMF figures, one hand-written copy figure). a100_40gb, b200 and mi300x have no such file:
their level is the class's own "achievable" figure (expected/CLASS.json, each citing the public
run it comes from) for the figures whose kind has recorded variation (matmul_*, device_*); a
figure with no achievable value, or of a kind never timed (h2d, attention...), is not replayed,
and the campaign lists it as not judged rather than invent a level or a noise for it.
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
from rigcheck.testing.coverage import gpu_noise

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


def rerun(level: float, key: str, factor: float, rng: random.Random,
          times: tuple[float, ...] | None = None, offset: float = 1.0) -> float:  # fmt: skip
    """The figure of one run: the level over the median of five repeat times drawn from
    `times` (the CI machine's recorded repeats of the figure by default), each `factor` times
    as long, on a device `offset` times as slow as its node's median."""
    times = times or repeats_for(key)
    return level / (offset * statistics.median(factor * rng.choice(times) for _ in range(REPEATS)))


def noise(cls: str, key: str) -> gpu_noise.Spread:
    """The healthy variation a class's figure is drawn with: the CI machine's repeats for cpu,
    real GPUs' recorded spread for a GPU class (an error where none is recorded)."""
    if cls == "cpu":
        return gpu_noise.Spread((1.0,), repeats_for(key), NOISE.name)
    return gpu_noise.spread(cls, key.split("_")[0])


def replay_file(cls: str, devices: list[str], slow: dict[str, list[tuple[str, float]]],
                rng: random.Random) -> dict[str, Any]:  # fmt: skip
    """The class's figures for each device ("cpu" or a GPU's index), each drawn anew; `slow`:
    device -> [(figure prefix, factor)] from the node's signatures."""
    kind, levels, origin = class_levels(cls)
    entries, origins = [], set()
    for device in devices:
        offsets: dict[str, float] = {}  # figure kind -> this device's own speed
        for key, level in levels.items():
            spread = noise(cls, key)
            origins.add(spread.origin)
            offset = offsets.setdefault(key.split("_")[0], rng.choice(spread.between))
            factor = 1.0
            for prefix, by in slow.get(device, []):
                factor *= by if key.startswith(prefix) else 1.0
            values = [rerun(level, key, factor, rng, spread.within, offset)
                      for _ in range(ATTEMPTS)]  # fmt: skip
            entries.append({"key": key, "device": device, "value": values})
    note = f"coverage campaign: the levels of {origin}, noise of {'; '.join(sorted(origins))}"
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
