"""Spec figures against published measurements and the peers' acceptance gates (issue 15).

Every GPU figure has an achievable tier from a published measurement, or says where no such
measurement was found; every memory floor is below the totals healthy boards are reported with;
and every floor that is more than 15% looser or stricter than a peer's gate for the same
definition is listed, and each listed case carries a written justification in the spec.

    python tests/spec/test_peer_gates.py   # prints every figure with a peer gate, as a table
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

SPEC_DIR = Path(__file__).resolve().parents[2] / "expected"
CLASS_FILES = sorted(p for p in SPEC_DIR.glob("*.json") if p.name != "spec.schema.json")
CLASSES = [p.stem for p in CLASS_FILES]
# A floor further than this from a peer's gate for the same definition needs a justification.
GAP = 0.15
# Memory floor policy: this fraction of the lowest total a healthy board is reported with.
MEMORY_FLOOR_FRACTION = 0.99
per_class = pytest.mark.parametrize("name", CLASSES)
# Published measurements found for figures another change owns right now (issue 10's spec half
# reworks the fp8 and Apple fp16 entries): apply them there, then drop the line here. The test
# fails once the figure has its achievable tier, so this list cannot go stale.
PENDING: dict[tuple[str, str], str] = {}


def raw(name: str) -> dict[str, Any]:
    return json.loads((SPEC_DIR / f"{name}.json").read_text())


def has_gpu(data: dict[str, Any]) -> bool:
    return data["backend"] != "cpu"


@dataclass(frozen=True)
class Gap:
    """One figure whose floor is more than GAP away from a peer's gate for the same definition."""

    name: str
    figure: str
    floor: float
    gate: float
    peer: str
    justification: str

    @property
    def ratio(self) -> float:
        return self.floor / self.gate

    def __str__(self) -> str:
        way = "looser" if self.ratio < 1 else "stricter"
        return (
            f"{self.name}.{self.figure}: floor {self.floor:g} is {abs(1 - self.ratio):.0%} {way} "
            f"than {self.peer}'s {self.gate:g}"
        )


def gaps(name: str, data: dict[str, Any]) -> list[Gap]:
    """Every (figure, gate) of the class where the floor differs from the gate by more than GAP."""
    found = []
    for key, entry in data["figures"].items():
        floor = entry["floor"] and entry["floor"]["value"]
        for gate in entry.get("peer_gates", []):
            if not gate["same_definition"] or floor is None:
                continue
            if abs(floor / gate["value"] - 1) > GAP:
                why = gate.get("justification", "")
                found.append(Gap(name, key, floor, gate["value"], gate["peer"], why))
    return found


def round_down_tenth(x: float) -> float:
    return math.floor(x * 10 + 1e-9) / 10


# ---- the real spec files ----


@per_class
def test_every_gpu_figure_has_an_achievable_tier_or_says_where_it_looked(name):
    data = raw(name)
    if not has_gpu(data):
        pytest.skip(f"{name}: host-dependent figures, no board to have a published measurement of")
    silent, both = [], []
    for key, entry in data["figures"].items():
        record = entry.get("no_published_measurement")
        pending = PENDING.get((name, key))
        if pending and entry["achievable"] is not None:
            both.append(f"{key} (has its tier now: remove it from PENDING)")
        if entry["achievable"] is None and record is None and not pending:
            silent.append(key)
        if entry["achievable"] is not None and record is not None:
            both.append(key)
    assert not silent, (
        f"{name}: no achievable tier and no record of where one was looked for: {silent}. Add a "
        "published measurement of this board, or a no_published_measurement record."
    )
    assert not both, f"{name}: an achievable tier and a 'no published measurement' record: {both}"


@per_class
def test_achievable_tiers_from_elsewhere_say_how_they_map(name):
    """An achievable tier's source says what was measured, on which board."""
    short = [
        key
        for key, entry in raw(name)["figures"].items()
        if entry["achievable"] is not None and len(entry["achievable"]["source"]) < 40
    ]
    assert not short, f"{name}: achievable tiers whose source is too short to say what: {short}"


@per_class
def test_peer_gates_are_in_the_figures_unit(name):
    wrong = [
        f"{key}: gate of {gate['peer']} in {gate['unit']}, figure in {entry['unit']}"
        for key, entry in raw(name)["figures"].items()
        for gate in entry.get("peer_gates", [])
        if gate["unit"] != entry["unit"]
    ]
    assert not wrong, f"{name}: " + "; ".join(wrong)


@per_class
def test_every_floor_far_from_a_peer_gate_is_justified(name):
    """Lists each floor more than 15% from a peer's gate of the same definition; each needs a
    written justification beside the gate (or a fixed floor)."""
    unjustified = [str(g) for g in gaps(name, raw(name)) if not g.justification.strip()]
    assert not unjustified, (
        "floors more than 15% from a peer's gate, without a justification: "
        + "; ".join(unjustified)
    )


@per_class
def test_memory_floor_is_below_every_healthy_total(name):
    data = raw(name)
    memory = data["expect"]["memory_per_device"]
    if data["vendor"] not in ("nvidia", "amd"):
        pytest.skip(f"{name}: host memory, not a board's")
    totals = memory.get("healthy_totals", [])
    assert totals, f"{name}: memory_per_device has no healthy_totals to keep its floor under"
    floor = memory["floor"]["value"]
    above = [f"{t['value']} GiB ({t['reported_by']})" for t in totals if floor >= t["value"]]
    assert not above, f"{name}: memory floor {floor} GiB is not below healthy totals {above}"
    lowest = min(t["value"] for t in totals)
    want = round_down_tenth(MEMORY_FLOOR_FRACTION * lowest)
    assert math.isclose(floor, want), (
        f"{name}: memory floor {floor} GiB; the policy (0.99 x the lowest healthy total, "
        f"{lowest} GiB, rounded down to 0.1 GiB) gives {want}"
    )
    source = memory["floor"]["source"]
    assert "memory floor policy" in source, f"{name}: the floor's source names no policy"


@per_class
def test_nvidia_memory_totals_come_from_nvml(name):
    """The suite's check reads NVML's total: an NVIDIA class records what NVML reports."""
    data = raw(name)
    if data["vendor"] != "nvidia":
        pytest.skip(f"{name}: not read through NVML")
    totals = data["expect"]["memory_per_device"].get("healthy_totals", [])
    assert any(t["reported_by"] == "nvml" for t in totals), f"{name}: no NVML total recorded"


# ---- the lister itself: it must find a planted gap and pass a close one ----


def planted(floor: float, gate: float, same: bool = True, why: str = "") -> dict[str, Any]:
    entry = {
        "unit": "GB/s",
        "floor": {"value": floor, "source": "x"},
        "peer_gates": [
            {"peer": "a peer", "value": gate, "unit": "GB/s", "source": "x", "definition": "x"}
        ],
    }
    entry["peer_gates"][0]["same_definition"] = same
    if why:
        entry["peer_gates"][0]["justification"] = why
    return {"figures": {"h2d_pinned_gbps": entry}}


@pytest.mark.parametrize(
    ("floor", "gate", "listed"),
    [(31.5, 48, True), (44.3, 48, False), (57, 48, True), (55, 48, False)],
)
def test_lister_flags_floors_more_than_15_percent_away(floor, gate, listed):
    found = gaps("planted", planted(floor, gate))
    assert bool(found) is listed, found
    if listed:
        assert "planted.h2d_pinned_gbps" in str(found[0]) and f"{gate:g}" in str(found[0])


def test_lister_ignores_gates_of_another_definition():
    assert gaps("planted", planted(10, 48, same=False)) == []


def test_lister_keeps_the_justification():
    (gap,) = gaps("planted", planted(10, 48, why="because the peer gates another size"))
    assert gap.justification.startswith("because")


def table() -> str:
    """Every figure with a peer gate: class, figure, achievable (source), floor, gate, verdict."""
    rows = ["| class | figure | achievable | floor | peer gate | verdict |", "|---" * 6 + "|"]
    for name in CLASSES:
        data = raw(name)
        for key, entry in data["figures"].items():
            for gate in entry.get("peer_gates", []):
                ach = entry["achievable"]
                floor = entry["floor"] and entry["floor"]["value"]
                if not gate["same_definition"]:
                    verdict = "other definition: recorded, not compared"
                elif floor is None:
                    verdict = "no floor (fails closed)"
                else:
                    ratio = floor / gate["value"]
                    verdict = f"floor/gate {ratio:.2f}"
                    if abs(ratio - 1) > GAP:
                        verdict += ": justified in the spec"
                rows.append(
                    f"| {name} | {key} | {ach['value'] if ach else 'none'} | {floor} | "
                    f"{gate['value']:g} ({gate['peer']}) | {verdict} |"
                )
    return "\n".join(rows)


def basis(entry: dict[str, Any]) -> str:
    """What a figure's floor rests on: a rigcheck recording, published measurements, the datasheet
    (no achievable tier), a fixed host-dependent bound, or nothing (the check fails closed)."""
    ach = entry["achievable"]
    if ach is not None:
        recorded = ach["source"].startswith(("rigcheck lent machine", "rigcheck:"))
        return "recorded" if recorded else "published"
    if entry["floor"] is None:
        return "none"
    return "datasheet" if entry["datasheet"] else "bound"


def count_cell(kinds: dict[str, str], kind: str, named: bool) -> str:
    keys = [k for k, v in kinds.items() if v == kind]
    return f"{len(keys)}" + (f" ({', '.join(keys)})" if named and keys else "")


def readme_table() -> str:
    """The README's class table: per class, how many figures rest on what."""
    rows = [
        "| class | figures | recorded by rigcheck on real hardware | published measurements "
        "| datasheet alone | host-dependent bound | no floor (fails closed) |",
        "|---" * 7 + "|",
    ]
    for name in CLASSES:
        figures = raw(name)["figures"]
        kinds = {k: basis(e) for k, e in figures.items()}
        cells = [
            count_cell(kinds, kind, named=kind in ("recorded", "none"))
            for kind in ("recorded", "published", "datasheet", "bound", "none")
        ]
        rows.append(f"| `{name}` | {len(figures)} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def test_readme_class_table_is_current():
    readme = (SPEC_DIR.parent / "README.md").read_text()
    assert readme_table() in readme, (
        "README.md's class table no longer matches expected/: regenerate it with "
        "`python tests/spec/test_peer_gates.py --write-readme`"
    )


def write_readme_table() -> None:
    """Replace README.md's class table (header row to the first blank line) with the current one."""
    path = SPEC_DIR.parent / "README.md"
    lines = path.read_text().split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("| class | figures |"))
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith("|"))
    lines[start:end] = readme_table().split("\n")
    path.write_text("\n".join(lines))


if __name__ == "__main__":
    if "--write-readme" in sys.argv:
        write_readme_table()
    else:
        sys.stdout.write((readme_table() if "--readme" in sys.argv else table()) + "\n")
