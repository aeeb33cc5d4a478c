"""Judging a measured figure against a class's tiers: pass, warn, or fail (closed).

Every check that has a measured value records it with `record()`, so the reports can show
measured against floor, achievable and datasheet without re-deriving anything.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

PROPERTY = "rigcheck"  # the user_properties key that carries a Judgement as a dict
PASS, WARN, FAIL = "pass", "warn", "fail"


@dataclass(frozen=True)
class Judgement:
    figure: str
    verdict: str
    measured: float | None
    unit: str
    floor: float | None
    achievable: float | None
    datasheet: float | None
    reason: str
    source: str | None = None  # provenance of the floor

    @property
    def ratio_to_datasheet(self) -> float | None:
        if self.measured is None or not self.datasheet:
            return None
        return self.measured / self.datasheet

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ratio_to_datasheet": self.ratio_to_datasheet}


def _tier(figure: dict[str, Any], name: str) -> float | None:
    tier = figure.get(name)
    return None if tier is None else tier["value"]


def judge(key: str, measured: float, figure: dict[str, Any] | None) -> Judgement:
    """Compare one measurement with its figure; no reference at all fails closed."""
    unit = figure["unit"] if figure else "?"
    floor, achievable, datasheet = (
        (_tier(figure, t) for t in ("floor", "achievable", "datasheet")) if figure else (None,) * 3
    )

    def verdict(v: str, reason: str) -> Judgement:
        source = figure["floor"]["source"] if figure and figure.get("floor") else None
        return Judgement(key, v, measured, unit, floor, achievable, datasheet, reason, source)

    numbers = _numbers(measured, unit, floor, achievable, datasheet)
    if floor is None:
        why = figure.get("unknown_reason", "no figure in the spec") if figure else "not in spec"
        return verdict(FAIL, f"no reference for this class ({why}): {numbers}")
    if measured < floor:
        return verdict(FAIL, f"below the floor: {numbers}")
    band = figure.get("warn_band", 0.1)
    if achievable is not None and measured < achievable * (1 - band):
        return verdict(WARN, f"more than {band:.0%} under the achievable figure: {numbers}")
    return verdict(PASS, numbers)


def _numbers(measured, unit, floor, achievable, datasheet) -> str:
    def show(v):
        if v is None:
            return "unknown"
        return f"{v:,.1f}" if abs(v) >= 10 else f"{v:.3g}"  # CPU figures are fractions of 1

    ratio = f", {measured / datasheet:.0%} of datasheet" if datasheet else ""
    return (
        f"measured {show(measured)} {unit} (floor {show(floor)}, achievable {show(achievable)}, "
        f"datasheet {show(datasheet)}{ratio})"
    )


def record(record_property, judgement: Judgement) -> None:
    """Attach a judgement to the current test (pytest's record_property fixture)."""
    record_property(PROPERTY, judgement.as_dict())
