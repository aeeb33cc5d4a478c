"""The blame's answer: one line naming the node, the device and the cause class with its
evidence, the exit code (docs/exit-codes.md), and the certificate's checks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rigcheck.blame.node_cause import Cause
from rigcheck.blame.suspects import Suspect
from rigcheck.reports.root_cause import shorten

CLEAN, MACHINE, USAGE, NOT_THE_MACHINE, ELSEWHERE = 0, 1, 2, 3, 4
CHECK_ID = "rigcheck/blame::"  # every blame check's id starts so (rigcheck k8s mark's tier)
JOB_HINT = (
    "look at the job: its code or data on that rank, or a slow peer link "
    "(rigcheck's node-pair rounds, docs/distributed.md)"
)


@dataclass(frozen=True)
class Answer:
    code: int
    line: str
    checks: list[dict[str, Any]]


def no_suspect(job_dir: str, read: dict[str, int]) -> Answer:
    """READ: what was read, per kind of record (suspects.evidence); something, or it is no
    answer (run_blame refuses it)."""
    said = ", ".join(f"{n} {kind}" for kind, n in read.items() if n)
    return Answer(CLEAN, f"no slow or hung rank in {job_dir} (read: {said})", [])


def no_rank(suspect: Suspect) -> Answer:
    """Every rank waits inside one collective: no rank holds it up, so no machine is blamed."""
    line = f"hung job, no rank to blame: {suspect.evidence}; look at the network or NCCL itself"
    return Answer(NOT_THE_MACHINE, line, [])


def not_examined(suspect: Suspect, here: str) -> Answer:
    line = (
        f"{suspect.kind} rank {_ranks(suspect)} on {suspect.where}: {suspect.evidence}. "
        f"This is {here}: run `rigcheck blame` on {suspect.host or 'that node'}, or pass "
        "its facts with --facts"
    )
    return Answer(ELSEWHERE, line, [])


def judged(suspect: Suspect, causes: list[Cause], baseline: str, note: str = "") -> Answer:
    """The node examined: blamed with its first cause, or clean and the job pointed at. NOTE:
    evidence about the node that blames nothing on its own (the clock-event time share)."""
    head = f"{suspect.kind} rank {_ranks(suspect)} on {suspect.where}"
    evidence = suspect.evidence + (f"; {note}" if note else "")
    rank_check = _check("suspect", "pass" if not causes else "fail", f"{head}: {evidence}")
    if not causes:
        line = f"{head}: node clean ({baseline}); {JOB_HINT}. Evidence: {evidence}"
        return Answer(NOT_THE_MACHINE, line, [rank_check])
    first = causes[0]
    more = f" (+{len(causes) - 1} more)" if len(causes) > 1 else ""
    line = f"{head}: {first.kind}: {first.detail}{more}. Evidence: {evidence}"
    checks = [_check(c.kind, "fail", c.detail) for c in causes]
    return Answer(MACHINE, line, [*checks, rank_check])


def drain_reason(answer: Answer) -> str | None:
    """The root-cause line a drain carries, or None when the machine is not blamed."""
    return shorten(answer.line) if answer.code == MACHINE else None


def _ranks(suspect: Suspect) -> str:
    shown = ", ".join(str(r) for r in suspect.ranks[:4])
    return shown + (f" (+{len(suspect.ranks) - 4})" if len(suspect.ranks) > 4 else "")


def _check(name: str, outcome: str, message: str) -> dict[str, Any]:
    """A certificate check entry (reports/certificate.schema.json) for one blame finding."""
    return {
        "id": f"{CHECK_ID}{name}",
        "name": name,
        "area": "blame",
        "file": "rigcheck/blame/node_cause.py",
        "line": None,
        "outcome": outcome,
        "phase": "call",
        "message": message,
        "detail": None,
        "duration_s": 0.0,
        "warnings": [],
        "figures": [],
    }
