"""`rigcheck diff A B`: what differs between two certificates, and whether it matters.

Noise: a figure moved when it changed by more than its noise, relative to A. The noise is the
figure's own `noise` when the certificate records one (the measurement's spread), else 5%:
the spread between healthy GPUs of one node and between runs (Azure/azurehpc PRs #628, #690).

A figure that fell but is still judged a pass in B (inside the spec's warning band of the
achievable figure, or above it) is listed, not counted: two healthy runs of one machine differ
by nothing a user should act on (issue 24). `--benchmark-compare-fail` is the gate for drops
between image versions that still pass.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any

from rigcheck.reports.certificate import flatten
from rigcheck.verdict import PASS

DEFAULT_NOISE = 0.05
# Facts that change from one minute to the next on a healthy machine: not a difference.
VOLATILE_FACTS = (
    "origin.*",
    "host.memory_available_bytes",
    "host.python_executable",
    "devices.*.memory_free_bytes",
    "devices.*.temperature_c",
    "devices.*.power.draw_w",
    "devices.*.clocks.sm_mhz",
    "devices.*.clocks.mem_mhz",
    "devices.*.processes",
    "devices.*.throttle_reasons",
    "smoke.*.max_rel_err",
    # Since boot, and the kernel log read over it: every run sees a later time.
    "kernel_log.uptime_s",
    "*.uptime_s",
    "uptime.since_boot_s",  # rigcheck/facts/host/uptime.py: a later run is always later
    "host.load_average*",
)
STILL_PASSES = "still a pass in B"
FACT, FIGURE, VERDICT, RUN = "fact", "figure", "verdict", "run"


@dataclass(frozen=True)
class Change:
    kind: str  # fact, figure, verdict, run
    key: str
    before: Any
    after: Any
    note: str = ""
    matters: bool = True
    better: bool = False  # an improvement: it matters, but nothing got worse

    @property
    def worse(self) -> bool:
        """What makes `rigcheck diff` exit 1: a difference that matters and is no improvement
        (a changed fact is neither better nor worse: a person should look at it)."""
        return self.matters and not self.better


# Better outcomes rank higher; a move up this ladder is an improvement.
RANK = {"fail": 0, "regressed": 0, "incomplete": 0, "warn": 1, "pass": 2}
LOWER_IS_BETTER_UNITS = ("s", "ms", "us", "µs")


def compare(a: dict[str, Any], b: dict[str, Any], noise: float | None = None) -> list[Change]:
    """Every difference between certificates A and B, those that matter flagged."""
    return [
        *_run_changes(a, b),
        *fact_changes(a["machine"], b["machine"]),
        *figure_changes(a, b, noise),
        *verdict_changes(a, b),
    ]


def _run_changes(a: dict[str, Any], b: dict[str, Any]) -> list[Change]:
    changes = []
    for key in ("name", "spec_file", "spec_version"):
        before, after = a["class"].get(key), b["class"].get(key)
        if before != after:
            changes.append(Change(RUN, f"class.{key}", before, after))
    if a["verdict"] != b["verdict"]:
        better = _ranked_up(a["verdict"], b["verdict"])
        changes.append(Change(RUN, "verdict", a["verdict"], b["verdict"], better=better))
    for side, cert in (("A", a), ("B", b)):
        if cert["partial"]:
            changes.append(Change(RUN, f"{side} is partial", "", cert["partial_reason"]))
    return changes


def fact_changes(a: dict[str, Any], b: dict[str, Any]) -> list[Change]:
    before, after = dict(flatten(a)), dict(flatten(b))
    changes = []
    for key in sorted(set(before) | set(after), key=_natural):
        if any(fnmatch.fnmatchcase(key, pattern) for pattern in VOLATILE_FACTS):
            continue
        old, new = before.get(key, _ABSENT), after.get(key, _ABSENT)
        if old != new:
            changes.append(Change(FACT, key, _shown(old), _shown(new), _fact_note(old, new)))
    return changes


def figure_changes(a: dict[str, Any], b: dict[str, Any], noise: float | None) -> list[Change]:
    before, after = _figures(a), _figures(b)
    changes = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        name = " ".join(part for part in key[1:] if part)
        if old is None or new is None:
            gone = "not measured in B" if new is None else "not measured in A"
            changes.append(Change(FIGURE, name, _measured(old), _measured(new), gone))
            continue
        changes.append(_moved(name, old, new, noise))
    return changes


def _moved(name: str, old: dict[str, Any], new: dict[str, Any], noise: float | None) -> Change:
    x, y, unit = old.get("measured"), new.get("measured"), new.get("unit", "")
    if x is None or y is None or x == 0:
        return Change(FIGURE, name, _measured(old), _measured(new), "", x != y)
    band = noise if noise is not None else max(old.get("noise", 0), new.get("noise", 0))
    band = band or DEFAULT_NOISE
    change = (y - x) / abs(x)
    direction = "higher" if change > 0 else "lower"
    if abs(change) <= band:
        note = f"{change:+.1%}, within noise (±{band:.0%})"
        return Change(FIGURE, name, f"{x:,.1f} {unit}", f"{y:,.1f} {unit}", note, False)
    note = f"{change:+.1%} ({direction}; noise ±{band:.0%})"
    better = (change < 0) if unit in LOWER_IS_BETTER_UNITS else (change > 0)
    if not better and _still_passes(new):  # inside the warning band: nothing to act on
        note = f"{note}, {STILL_PASSES}"
        return Change(FIGURE, name, f"{x:,.1f} {unit}", f"{y:,.1f} {unit}", note, False)
    return Change(FIGURE, name, f"{x:,.1f} {unit}", f"{y:,.1f} {unit}", note, better=better)


def _still_passes(entry: dict[str, Any]) -> bool:
    """B judged the figure a pass, and its value agrees (a figure below its floor never does)."""
    floor, measured = entry.get("floor"), entry.get("measured")
    above_floor = floor is None or (measured is not None and measured >= floor)
    return entry.get("verdict") == PASS and above_floor


def different_classes(a: dict[str, Any], b: dict[str, Any]) -> str | None:
    """'cpu and h100' when A and B checked different classes: their figures do not compare."""
    names = a["class"].get("name"), b["class"].get("name")
    return None if names[0] == names[1] else f"{names[0]} and {names[1]}"


def verdict_changes(a: dict[str, Any], b: dict[str, Any]) -> list[Change]:
    before = {c["id"]: c for c in a["checks"]}
    after = {c["id"]: c for c in b["checks"]}
    changes = []
    for node_id in [*before, *(i for i in after if i not in before)]:
        old, new = before.get(node_id), after.get(node_id)
        was = old["outcome"] if old else "absent" if node_id not in a["not_run"] else "not run"
        now = new["outcome"] if new else "absent" if node_id not in b["not_run"] else "not run"
        if was != now:
            why = (new or old)["message"] or ""
            note = why.splitlines()[0] if why else ""
            changes.append(Change(VERDICT, node_id, was, now, note, better=_ranked_up(was, now)))
    return changes


def _ranked_up(before: str, after: str) -> bool:
    return before in RANK and after in RANK and RANK[after] > RANK[before]


def _figures(certificate: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """(check, figure, device label) -> the judgement; shown as 'figure label'."""
    return {
        (check["name"].partition("[")[0], entry["figure"], entry.get("label") or ""): entry
        for check in certificate["checks"]
        for entry in check["figures"]
    }


_ABSENT = object()


def _shown(value: Any) -> Any:
    return "(absent)" if value is _ABSENT else value


def _fact_note(old: Any, new: Any) -> str:
    if old is _ABSENT:
        return "only in B"
    if new is _ABSENT:
        return "only in A"
    return ""


def _measured(entry: dict[str, Any] | None) -> str:
    if entry is None or entry.get("measured") is None:
        return "—"
    return f"{entry['measured']:,.1f} {entry.get('unit', '')}"


def _natural(key: str) -> list[Any]:
    """devices.10 after devices.9."""
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in key.split(".")]
