"""From a job's folder to the rank that slowed or hung it and where that rank ran.

JOB_DIR/steps/ holds the step logs (rigcheck.blame.steplog), JOB_DIR/flight_recorder/ the
flight recorder dumps (rigcheck.blame.flight_recorder). A hang (ranks waiting in a collective
on others) is named before slowness: a hung job's last steps say nothing about who stopped.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rigcheck.blame.flight_recorder import RankDump, find_hang, read_dumps
from rigcheck.blame.slow_rank import slow_ranks
from rigcheck.blame.stall_dump import FOLDER as DUMPS
from rigcheck.blame.step_reader import JobRecordError, RankSteps, read_step_logs

HUNG, SLOW = "hung", "slow"


@dataclass(frozen=True)
class Suspect:
    kind: str  # HUNG or SLOW
    ranks: list[int]  # the culprit ranks, first the one named
    evidence: str
    place: dict[str, Any]  # the first rank's step-log header: host, GPU, NICs; {} if unknown

    @property
    def host(self) -> str | None:
        return self.place.get("host")

    @property
    def gpu(self) -> str | None:
        """The rank's GPU as the node's facts name it (index or UUID), from the visible list."""
        visible = [v.strip() for v in (self.place.get("cuda_visible_devices") or "").split(",")]
        local = self.place.get("local_rank")
        if isinstance(local, int) and 0 <= local < len(visible) and visible[local]:
            return visible[local]
        return None

    @property
    def where(self) -> str:
        parts = [f"GPU {self.gpu}" if self.gpu else None, self.place.get("nics")]
        shown = ", ".join(p for p in parts if p)
        return f"{self.host or 'an unknown host'}" + (f" ({shown})" if shown else "")


@dataclass(frozen=True)
class Job:
    folder: Path
    ranks: dict[int, RankSteps]
    start: float | None  # the earliest rank's start, time.time() seconds

    def place(self, rank: int | None) -> dict[str, Any]:
        return self.ranks[rank].header if rank in self.ranks else {}


def read_job(folder: Path) -> Job:
    if not folder.is_dir():
        raise JobRecordError(f"{folder}: no such folder; name the job's folder (docs/blame.md)")
    steps = folder / "steps"
    if not steps.is_dir() and not (folder / DUMPS).is_dir():
        raise JobRecordError(
            f"{folder}: holds neither steps/ nor {DUMPS}/; write them with "
            "rigcheck.blame.steplog.StepLog (docs/blame.md)"
        )
    ranks = read_step_logs(steps) if steps.is_dir() else {}
    starts = [r.header.get("started_at") for r in ranks.values()]
    start = min((s for s in starts if isinstance(s, int | float)), default=None)
    return Job(folder, ranks, start)


def _after_the_last_step(dumps: dict[int, RankDump], job: Job) -> dict[int, RankDump]:
    """The dumps no rank finished a step after: a dump older than a step was a pause the job
    got over, not the hang it ended in."""
    ends = [r.last_end for r in job.ranks.values() if r.last_end is not None]
    last = max(ends, default=float("-inf"))
    return {rank: d for rank, d in dumps.items() if d.written_at >= last}


def find_suspect(job: Job) -> Suspect | None:
    dumps = read_dumps(job.folder / DUMPS) if (job.folder / DUMPS).is_dir() else {}
    hang = find_hang(_after_the_last_step(dumps, job))
    if hang is not None:  # no culprit: every rank is inside the collective, none to blame
        first = hang.culprits[0] if hang.culprits else None
        return Suspect(HUNG, hang.culprits, hang.evidence, job.place(first))
    slow = slow_ranks(job.ranks)
    if slow:
        more = (
            f"; also slow: rank(s) {', '.join(str(s.rank) for s in slow[1:])}" if slow[1:] else ""
        )
        return Suspect(
            SLOW, [s.rank for s in slow], slow[0].evidence + more, job.place(slow[0].rank)
        )
    return None
