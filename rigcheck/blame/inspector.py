"""NCCL Inspector's per-collective JSON: the rank the others wait for in their collectives.

The Inspector profiler plugin (NVIDIA/nccl plugins/profiler/inspector, formerly
ext-profiler/inspector) writes one JSON object a line, one per collective per communicator
rank, into `<hostname>-pid<pid>.log` under NCCL_INSPECTOR_DUMP_DIR: {"header": {"id", "rank",
"n_ranks", "nnodes"}, "metadata": {"inspector_output_format_version": "v4.0", "hostname", ...},
"coll_perf": {"coll", "coll_sn", "coll_exec_time_us", ...}} (inspector_json.cc). Point the
dump dir at JOB_DIR/nccl_inspector. Output versions other than v4.0 are refused.

A collective ends on every rank together, so a rank that arrives late spends the least time in
it: the others' time minus its own is how long they waited for it (the "arrived last, lowest
wait" reading of AMD's TraceLens straggler summary). A rank is late when that wait, its median
over the collectives every rank reported, exceeds MIN_EXCESS of the others' collective time and
Z standard errors.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rigcheck.blame.slow_rank import MIN_EXCESS, MIN_STEPS, WARMUP_STEPS, Z, median_error
from rigcheck.blame.step_reader import JobRecordError

FOLDER = "nccl_inspector"
VERSIONS = ("v4.0",)
PATTERNS = ("*.log", "*.jsonl")


@dataclass(frozen=True)
class Collective:
    comm: str
    n_ranks: int
    rank: int
    seq: int
    name: str
    exec_us: float
    host: str | None


@dataclass(frozen=True)
class LateRank:
    rank: int
    wait_s: float  # the others' median wait for it, per collective
    others_s: float  # the others' median collective time
    collectives: int
    name: str
    host: str | None

    @property
    def evidence(self) -> str:
        return (
            f"NCCL Inspector: the other ranks waited {self.wait_s * 1e3:.1f} ms for rank "
            f"{self.rank} in each {self.name} (median of {self.collectives}; "
            f"{self.wait_s / self.others_s:.0%} of their {self.others_s * 1e3:.1f} ms)"
        )


def read_collectives(folder: Path) -> list[Collective]:
    found = []
    for pattern in PATTERNS:
        for path in sorted(folder.rglob(pattern)):
            found += _read_file(path)
    return found


def _read_file(path: Path) -> list[Collective]:
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    found = []
    for number, line in enumerate(lines, start=1):
        try:
            record = json.loads(line)
        except ValueError:
            if number == len(lines):  # the job was killed mid-line
                break
            raise JobRecordError(
                f"{path}:{number}: not JSON; is this NCCL Inspector output?"
            ) from None
        one = _collective(path, number, record)
        if one is not None:
            found.append(one)
    return found


def _collective(path: Path, number: int, record: Any) -> Collective | None:
    if not isinstance(record, dict) or not isinstance(record.get("header"), dict):
        raise JobRecordError(f"{path}:{number}: no 'header': not NCCL Inspector output")
    version = (record.get("metadata") or {}).get("inspector_output_format_version")
    if version not in VERSIONS:
        raise JobRecordError(
            f"{path}:{number}: NCCL Inspector output version {version!r}; this rigcheck "
            f"reads {', '.join(VERSIONS)}: update rigcheck to read it"
        )
    perf, head = record.get("coll_perf"), record["header"]
    if not isinstance(perf, dict):
        return None  # a point-to-point record: not a collective every rank joins
    values = (head.get("rank"), head.get("n_ranks"), perf.get("coll_sn"))
    if not all(isinstance(v, int) for v in values) or not _number(perf.get("coll_exec_time_us")):
        raise JobRecordError(f"{path}:{number}: a record without rank, n_ranks, coll_sn or time")
    return Collective(
        str(head.get("id")),
        head["n_ranks"],
        head["rank"],
        perf["coll_sn"],
        str(perf.get("coll")),
        float(perf["coll_exec_time_us"]),
        (record.get("metadata") or {}).get("hostname"),
    )


def late_ranks(
    collectives: list[Collective], min_excess: float = MIN_EXCESS, z: float = Z
) -> list[LateRank]:
    """The ranks the others waited for, longest wait first; [] when none or too few."""
    table = _widest_communicator(collectives)
    if table is None:
        return []
    times, hosts, name = table
    waits: dict[int, list[float]] = {rank: [] for rank in hosts}
    others_time: dict[int, list[float]] = {rank: [] for rank in hosts}
    for by_rank in times:
        for rank, own in by_rank.items():
            others = statistics.median(t for r, t in by_rank.items() if r != rank)
            waits[rank].append(others - own)
            others_time[rank].append(others)
    found = []
    for rank, series in waits.items():
        wait, reference = statistics.median(series), statistics.median(others_time[rank])
        if reference > 0 and wait > min_excess * reference and wait > z * median_error(series):
            found.append(
                LateRank(rank, wait / 1e6, reference / 1e6, len(series), name, hosts[rank])
            )
    return sorted(found, key=lambda late: -late.wait_s)


def _widest_communicator(
    collectives: list[Collective],
) -> tuple[list[dict[int, float]], dict[int, str | None], str] | None:
    """The widest communicator's collectives that every one of its ranks reported, in order
    (warm-up dropped), each {rank: time in us}; its ranks' hosts; the collective's name."""
    if not collectives:
        return None
    widest = max(c.n_ranks for c in collectives)
    comms = {c.comm for c in collectives if c.n_ranks == widest}
    comm = max(sorted(comms), key=lambda k: sum(c.comm == k for c in collectives))
    mine = [c for c in collectives if c.comm == comm]
    by_seq: dict[int, dict[int, float]] = {}
    for c in mine:
        by_seq.setdefault(c.seq, {})[c.rank] = c.exec_us
    complete = [by_seq[s] for s in sorted(by_seq) if len(by_seq[s]) == widest][WARMUP_STEPS:]
    if widest < 2 or len(complete) < MIN_STEPS:
        return None
    hosts = {c.rank: c.host for c in mine}
    return complete, hosts, Counter(c.name for c in mine).most_common(1)[0][0]


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
