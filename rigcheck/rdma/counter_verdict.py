"""Judging RDMA port error counters: their level now, and their change over a run.

Limits, with their public sources:
- a port's error counters summed: above 100 fails, above 0 warns. gcm's check_ib_counters
  (facebookresearch/gcm PR #119: --warn-threshold=0, --crit-threshold=100 on the aggregate of
  the IB error counters), written because "a single degraded IB port can cause 5-30%
  throughput regressions in NCCL collectives" (gcm #103).
- over a run: any increase of link_downed or link_error_recovery fails, naming the port: the
  link went down or retrained under load. Azure's NHC fails a node on any IB link flap in its
  window (azurehpc-health-checks, check_ib_link_flapping); ClusterMAX asks for link-flap
  monitoring. Other error counters growing during the run count against the same 0/100 limits.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rigcheck.facts.fabric.rdma_counters import ERROR_COUNTERS, FLAP_COUNTERS
from rigcheck.facts.probe import is_error

WARN_ABOVE = 0  # gcm PR #119 --warn-threshold
FAIL_ABOVE = 100  # gcm PR #119 --crit-threshold
SOURCE = "gcm check_ib_counters limits (facebookresearch/gcm PR #119): warn above 0, fail above 100"


def port_label(key: str) -> str:
    """'mlx5_3/1' -> 'mlx5_3 port 1', as the fabric checks name ports."""
    device, _, port = key.partition("/")
    return f"{device} port {port}"


def _errors(counters: Mapping[str, Any]) -> dict[str, int]:
    """The non-zero error counters of one port (only the ones judged)."""
    return {k: v for k, v in counters.items() if k in ERROR_COUNTERS and v}


def _unreadable(label: str, block: Any) -> str | None:
    """Why a port's counters cannot be judged, or None."""
    if is_error(block):
        return f"{label}: counters unreadable: {block['error']}"
    bad = {k: v["error"] for k, v in block["counters"].items() if is_error(v)}
    if bad:
        name, why = next(iter(bad.items()))
        return f"{label}: {name} unreadable ({why})"
    return None


def _listing(errors: Mapping[str, int]) -> str:
    parts = []
    for name, value in sorted(errors.items()):
        stuck = " (stuck at its maximum: at least)" if value >= ERROR_COUNTERS[name] else ""
        parts.append(f"{name} {value}{stuck}")
    return ", ".join(parts)


def judge_levels(ports: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(failures, warnings) of each port's error counters as they stand."""
    failures, warnings = [], []
    for key, block in sorted(ports.items()):
        label = port_label(key)
        why = _unreadable(label, block)
        if why:
            failures.append(why)
            continue
        errors = _errors(block["counters"])
        total = sum(errors.values())
        line = f"{label}: {total} errors ({_listing(errors)})"
        if total > FAIL_ABOVE:
            failures.append(line)
        elif total > WARN_ABOVE:
            warnings.append(line)
    return failures, warnings


def judge_change(before: Any, after: Any, during: str) -> tuple[list[str], list[str]]:
    """(failures, warnings): what changed on each port between two samples of a run."""
    for name, sample in (("before", before), ("after", after)):
        if is_error(sample):
            return [f"no port counters {name} the {during}: {sample['error']}"], []
    old, new = before["ports"], after["ports"]
    failures = [f"{port_label(k)}: gone after the {during}" for k in sorted(old.keys() - new)]
    failures += [f"{port_label(k)}: appeared during the {during}" for k in sorted(new.keys() - old)]
    warnings: list[str] = []
    for key in sorted(set(old) & set(new)):
        f, w = _port_change(port_label(key), old[key], new[key], during)
        failures += f
        warnings += w
    return failures, warnings


def _port_change(label: str, old: Any, new: Any, during: str) -> tuple[list[str], list[str]]:
    why = _unreadable(label, old) or _unreadable(label, new)
    if why:
        return [why], []
    a, b = old["counters"], new["counters"]
    failures = []
    for name in sorted(set(a) & set(b)):
        if b[name] < a[name]:
            failures.append(
                f"{label}: {name} went from {a[name]} to {b[name]} during the {during}: the "
                "counters were reset (perfquery -R, a driver reload); the change cannot be judged"
            )
    for name in FLAP_COUNTERS:
        failures += _flap(label, name, a.get(name), b.get(name), during)
    grown = {n: b[n] - a[n] for n in set(a) & set(b) if n not in FLAP_COUNTERS and b[n] > a[n]}
    if not grown:
        return failures, []
    line = f"{label}: {sum(grown.values())} new errors during the {during} ({_listing(grown)})"
    if sum(grown.values()) > FAIL_ABOVE:
        return [*failures, line], []
    return failures, [line] if sum(grown.values()) > WARN_ABOVE else []


def _flap(label: str, name: str, a: Any, b: Any, during: str) -> list[str]:
    what = "went down" if name == "link_downed" else "retrained (link error recovery)"
    if a is None or b is None:
        return [f"{label}: no {name} counter, a link flap during the {during} cannot be seen"]
    if a >= ERROR_COUNTERS[name]:
        return [
            f"{label}: {name} is stuck at its maximum {a}, so a flap during the {during} cannot "
            "be seen: clear the port's counters (`perfquery -R`) and run again"
        ]
    if b > a:
        return [f"{label}: the link {what} {b - a} time(s) during the {during} ({name} {a} -> {b})"]
    return []
