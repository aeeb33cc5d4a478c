"""Trends: a figure drifting away from its own history.

A series is one figure of one device on one node (e.g. matmul_bf16_tflops gpu1 on node-07), in
run order. It drifts when its latest value is more than the spec's warning band (`warn_band`,
the same band that turns a pass into a warning against the achievable tier; 10% when unstated)
worse than the median of its own earlier runs, and the least-squares slope over the series points
the same way. Worse is below for a rate and above for a time (rigcheck.history.direction); a
unit that says neither drifts either way, and the text does not call it worse. The slope is
reported per day, with the first and last dates, so a reader can tell a slow decline from one
bad run.
"""

from __future__ import annotations

import datetime as dt
import statistics
from dataclasses import dataclass

from rigcheck.history.direction import HIGHER, LOWER, better_direction

DEFAULT_BAND = 0.1  # rigcheck.verdict.judge's default warn_band
MIN_RUNS = 3  # two earlier runs at least: one earlier value is not a history


@dataclass(frozen=True)
class Point:
    at: str  # ISO 8601 UTC
    value: float


@dataclass(frozen=True)
class Drift:
    node: str
    series: str  # "figure label"
    unit: str
    baseline: float  # median of the earlier runs
    latest: float
    slope_per_day: float
    first: str
    last: str
    runs: int
    band: float
    direction: int | None = HIGHER  # which way is better (rigcheck.history.direction)

    @property
    def below(self) -> float:
        return 1 - self.latest / self.baseline

    def text(self) -> str:
        verb = "moved" if self.direction is None else "drifted"
        way = "below" if self.latest < self.baseline else "above"
        note = {HIGHER: "", LOWER: ", lower is better"}.get(
            self.direction, f", which way is better is not known for {self.unit}"
        )
        return (
            f"{self.node}: {self.series} {verb} {abs(self.below):.0%} {way} its own median "
            f"{self.baseline:,.4g} {self.unit} (band {self.band:.0%}{note}): {self.latest:,.4g} "
            f"{self.unit} now, slope {self.slope_per_day:+,.3g} {self.unit}/day from "
            f"{self.first[:10]} to {self.last[:10]} ({self.runs} runs)"
        )


def days(at: str) -> float:
    moment = dt.datetime.fromisoformat(at.replace("Z", "+00:00"))
    return moment.timestamp() / 86400


def slope_per_day(points: list[Point]) -> float:
    """Least-squares slope of value against time, in units per day; 0 when time does not vary."""
    xs = [days(p.at) for p in points]
    ys = [p.value for p in points]
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    if spread == 0:
        return 0.0
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / spread


def drift(node: str, series: str, unit: str, points: list[Point], band: float) -> Drift | None:
    """The series' drift, or None when it holds within its band (or is too short to say)."""
    if len(points) < MIN_RUNS:
        return None
    points = sorted(points, key=lambda p: p.at)
    baseline = statistics.median(p.value for p in points[:-1])
    latest = points[-1].value
    slope = slope_per_day(points)
    direction = better_direction(unit)
    if baseline <= 0 or not worse(direction, baseline, latest, slope, band):
        return None
    return Drift(
        node,
        series,
        unit,
        baseline,
        latest,
        slope,
        points[0].at,
        points[-1].at,
        len(points),
        band,
        direction,
    )


def worse(direction: int | None, baseline: float, latest: float, slope: float, band: float) -> bool:
    """Past the band on the worse side, the slope agreeing; either side when the way is unknown."""
    if direction == HIGHER:
        return latest < baseline * (1 - band) and slope < 0
    if direction == LOWER:
        return latest > baseline * (1 + band) and slope > 0
    return worse(HIGHER, baseline, latest, slope, band) or worse(
        LOWER, baseline, latest, slope, band
    )


def drifts(runs: list[dict], bands: dict[str, float]) -> list[Drift]:
    """Every drifting series in runs read from the store (rigcheck.history.store.load_runs);
    `bands` maps a figure to its spec's warn_band."""
    series: dict[tuple[str, str, str, str], list[Point]] = {}
    for run in runs:
        for entry in run["figures"]:
            label = " ".join(p for p in (entry["figure"], entry["label"]) if p)
            key = (run["node"], label, entry["figure"], entry["unit"] or "")
            series.setdefault(key, []).append(Point(run["started_at"], entry["measured"]))
    found = []
    for (node, label, figure, unit), points in sorted(series.items()):
        band = bands.get(figure, DEFAULT_BAND)
        result = drift(node, label, unit, points, band)
        if result is not None:
            found.append(result)
    return found


def series_drifts(found: list[dict], bands: dict[str, float]) -> list[Drift]:
    """Every drifting series of a node's pre-aggregated series (rigcheck.history.series): the
    same judgement as drifts(), on each series' window of newest values."""
    out = []
    for row in found:
        points = [Point(at, value) for at, value in row["recent"]]
        band = bands.get(row["figure"], DEFAULT_BAND)
        result = drift(row["node"], row["series"], row["unit"] or "", points, band)
        if result is not None:
            out.append(result)
    return out


def spec_bands(class_names: set[str]) -> dict[str, float]:
    """Each figure's warn_band from the classes' specs (the narrowest when classes differ). Only
    the named classes' files are read, and not validated again (the run validated its own):
    validating every class's cost a run's record step 0.5 s."""
    import json

    from rigcheck.spec import known_classes, spec_dir

    bands: dict[str, float] = {}
    for name in sorted(class_names & set(known_classes())):
        figures = json.loads((spec_dir() / f"{name}.json").read_text()).get("figures") or {}
        for figure, entry in figures.items():
            band = entry.get("warn_band", DEFAULT_BAND) if isinstance(entry, dict) else None
            if isinstance(band, int | float):
                bands[figure] = min(band, bands.get(figure, band))
    return bands
