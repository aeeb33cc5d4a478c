"""From a job's folder to the rank that slowed or hung it and where that rank ran.

JOB_DIR/steps/ holds the step logs (rigcheck.blame.steplog), JOB_DIR/flight_recorder/ the
flight recorder dumps (rigcheck.blame.flight_recorder), JOB_DIR/ncclras/ NCCL RAS answers,
JOB_DIR/nccl_inspector/ NCCL Inspector logs, JOB_DIR/nvrx/ NVRx straggler logs. A hang (ranks
waiting in a collective on others) is named before slowness: a hung job's last steps say nothing
about who stopped. Hangs: the flight recorder, then RAS. Slowness: the step logs (the rank's own
work), then Inspector (the others' wait for it), then NVRx's own verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rigcheck.blame import inspector, ncclras, nvrx
from rigcheck.blame.flight_recorder import RankDump, find_hang, read_dumps
from rigcheck.blame.slow_rank import slow_ranks
from rigcheck.blame.stall_dump import FOLDER as DUMPS
from rigcheck.blame.step_reader import JobRecordError, RankSteps, read_step_logs

HUNG, SLOW = "hung", "slow"
RECORDS = ("steps", DUMPS, ncclras.FOLDER, inspector.FOLDER, nvrx.FOLDER)


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
        """The rank's GPU as the node's facts name it (index or UUID): the tool's own NVML
        index (RAS), else the visible list picked by the local rank."""
        if self.place.get("gpu") is not None:
            return str(self.place["gpu"])
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

    def place(self, rank: int | None, known: dict[str, Any] | None = None) -> dict[str, Any]:
        """Where RANK ran: its step log's header, else what the naming tool said (KNOWN)."""
        return self.ranks[rank].header if rank in self.ranks else dict(known or {})

    def holds(self, folder: str) -> bool:
        return (self.folder / folder).is_dir()


def read_job(folder: Path) -> Job:
    if not folder.is_dir():
        raise JobRecordError(f"{folder}: no such folder; name the job's folder (docs/blame.md)")
    steps = folder / "steps"
    if not any((folder / name).is_dir() for name in RECORDS):
        raise JobRecordError(
            f"{folder}: holds none of {', '.join(n + '/' for n in RECORDS)}; write step logs "
            "with rigcheck.blame.steplog.StepLog or save the tools' output there (docs/blame.md)"
        )
    ranks = read_step_logs(steps) if steps.is_dir() else {}
    starts = [r.header.get("started_at") for r in ranks.values()]
    start = min((s for s in starts if isinstance(s, int | float)), default=None)
    return Job(folder, ranks, start)


def evidence(job: Job) -> dict[str, int]:
    """What the job's folder gave to judge by, per kind of record. "No slow or hung rank" is an
    answer only when something was read: a folder of empty, binary or cut-short records said it
    (exit 0) having read nothing."""
    folder = job.folder
    answers = ncclras.read_answers(folder / ncclras.FOLDER) if job.holds(ncclras.FOLDER) else []
    return {
        "rank step log(s)": len(job.ranks),
        "flight recorder dump(s)": len(read_dumps(folder / DUMPS)) if job.holds(DUMPS) else 0,
        "RAS answer(s) on the job's communicator": sum(a.world for a in answers),
        "Inspector collective(s)": len(inspector.read_collectives(folder / inspector.FOLDER))
        if job.holds(inspector.FOLDER)
        else 0,
        "NVRx report(s)": nvrx.reports(folder / nvrx.FOLDER) if job.holds(nvrx.FOLDER) else 0,
    }


def _after_the_last_step(dumps: dict[int, RankDump], job: Job) -> dict[int, RankDump]:
    """The dumps no rank finished a step after: a dump older than a step was a pause the job
    got over, not the hang it ended in."""
    ends = [r.last_end for r in job.ranks.values() if r.last_end is not None]
    last = max(ends, default=float("-inf"))
    return {rank: d for rank, d in dumps.items() if d.written_at >= last}


def find_suspect(job: Job) -> Suspect | None:
    return _hung(job) or _slow(job)


def _hung(job: Job) -> Suspect | None:
    dumps = read_dumps(job.folder / DUMPS) if job.holds(DUMPS) else {}
    hang = find_hang(_after_the_last_step(dumps, job))
    if hang is not None:  # no culprit: every rank is inside the collective, none to blame
        first = hang.culprits[0] if hang.culprits else None
        return Suspect(HUNG, hang.culprits, hang.evidence, job.place(first))
    answers = ncclras.read_answers(job.folder / ncclras.FOLDER) if job.holds(ncclras.FOLDER) else []
    ras = ncclras.find_ras_hang(answers)
    if ras is not None:
        first = ras.culprits[0] if ras.culprits else None
        return Suspect(HUNG, ras.culprits, ras.evidence, job.place(first, ras.places.get(first)))
    return None


def _slow(job: Job) -> Suspect | None:
    slow = slow_ranks(job.ranks)
    if slow:
        return _named(SLOW, [(s.rank, s.evidence, {}) for s in slow], job)
    if job.holds(inspector.FOLDER):
        late = inspector.late_ranks(inspector.read_collectives(job.folder / inspector.FOLDER))
        if late:
            return _named(SLOW, [(x.rank, x.evidence, {"host": x.host}) for x in late], job)
    if job.holds(nvrx.FOLDER):
        found = nvrx.read_stragglers(job.folder / nvrx.FOLDER)
        if found:
            return _named(SLOW, [(x.rank, x.evidence, {"host": x.node}) for x in found], job)
    return None


def _named(kind: str, found: list[tuple[int, str, dict[str, Any]]], job: Job) -> Suspect:
    """The first of FOUND (rank, evidence, where the tool says it ran) named, the rest listed."""
    ranks = list(dict.fromkeys(rank for rank, _, _ in found))
    more = f"; also slow: rank(s) {', '.join(map(str, ranks[1:]))}" if ranks[1:] else ""
    rank, evidence, known = found[0]
    return Suspect(kind, ranks, evidence + more, job.place(rank, known))
