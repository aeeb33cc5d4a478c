"""Progress files: every rank says which stage it is in and that it is alive.

A hung collective cannot report itself. Each rank keeps <report-dir>/progress/<host>.rank<R>.json
fresh (its stage, when the stage began, a heartbeat every few seconds from a thread), so when the
job times out the parent can name the rank that stopped answering: the one behind the others, or
the one whose heartbeat stopped.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

# The worker's stages in order; a rank further down the list got further.
STAGES = (
    "started",
    "init_process_group",
    "allreduce_check",
    "allreduce",
    "allgather",
    "reducescatter",
    "destroy_process_group",
    "p2p",
    "write_result",
    "done",
)
HEARTBEAT_S = 2.0
STALE_AFTER_S = 3 * HEARTBEAT_S


def write_json_atomically(path: Path, data: dict[str, Any]) -> None:
    """Readers never see half a file: write beside it, then rename over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, default=str) + "\n")
    os.replace(tmp, path)


def rank_file_name(host: str, rank: int) -> str:
    return f"{host}.rank{rank:04d}.json"


class Progress:
    """One rank's progress file, rewritten at each stage and by a heartbeat thread."""

    def __init__(self, directory: Path, identity: dict[str, Any]):
        self.path = directory / rank_file_name(identity["host"], identity["rank"])
        now = time.time()
        self.state = {**identity, "pid": os.getpid(), "stage": "started", "detail": ""}
        self.state.update(stage_index=0, stage_started_at=now, heartbeat_at=now)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="rigcheck-heartbeat", daemon=True)

    def start(self) -> Progress:
        self._write()
        self._thread.start()
        return self

    def stage(self, name: str, detail: str = "") -> None:
        with self._lock:
            if name != self.state["stage"]:
                self.state.update(stage=name, stage_started_at=time.time())
            self.state.update(stage_index=STAGES.index(name), detail=detail, in_collective=False)
        self._write()

    def in_collective(self, inside: bool) -> None:
        """Around each collective call: a rank outside it while the others wait inside is the
        one holding them up."""
        self.note(in_collective=inside)

    def note(self, **facts: Any) -> None:
        """Add facts to the file (the device, once known), for the messages that name ranks."""
        with self._lock:
            self.state.update(facts)
        self._write()

    def stop(self) -> None:
        self._stop.set()

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT_S):
            self._write()

    def _write(self) -> None:
        with self._lock:
            self.state["heartbeat_at"] = time.time()
            snapshot = dict(self.state)
        # A full or vanished disk must not kill the rank; its result says more.
        with contextlib.suppress(OSError):
            write_json_atomically(self.path, snapshot)


def describe(entry: dict[str, Any]) -> str:
    detail = f" ({entry['detail']})" if entry.get("detail") else ""
    return f"'{entry.get('stage')}'{detail}"


def diagnose(
    world_size: int,
    results: dict[int, dict[str, Any]],
    progress: dict[int, dict[str, Any]],
    stopped_at: float | None = None,
    label=lambda rank: f"rank {rank}",
) -> list[str]:
    """Why the job did not finish on every rank, the rank to blame first; [] when it did.

    `stopped_at` is when the watchdog ended the job (None: the job ended by itself).
    """
    unfinished = [r for r in range(world_size) if r not in results]
    failed = [r for r in sorted(results) if results[r].get("error")]
    if not unfinished and not failed:
        return []
    problems = [
        f"{label(r)} never started: no progress file (crashed before its first stage? "
        "see torchrun's log)"
        for r in unfinished
        if r not in progress
    ]
    waiting = [r for r in unfinished if r in progress]
    problems += _behind_or_stuck(waiting, progress, set(results), stopped_at, label)
    problems += [
        f"{label(r)} failed in '{results[r].get('failed_stage', '?')}': {results[r]['error']}"
        for r in failed
    ]
    return problems


def slow_not_hung(
    world_size: int | None, results: dict[int, dict[str, Any]], progress: dict[int, dict[str, Any]],
    stopped_at: float,
) -> str | None:  # fmt: skip
    """Where a job the time limit stopped was, when no rank is to blame: every rank alive (its
    heartbeat fresh), none failed, none behind or ahead of the others. None: a rank is to
    blame (hung, died, behind, failed), which diagnose() names."""
    if world_size is None:
        return "no rank had written its first progress file (torchrun and torch still loading)"
    if results or len(progress) < world_size:
        return None  # a rank ended or never started while the others ran: one to blame
    if any(stopped_at - p["heartbeat_at"] > STALE_AFTER_S for p in progress.values()):
        return None
    stages = {(p["stage_index"], bool(p.get("in_collective"))) for p in progress.values()}
    if len(stages) > 1:
        return None  # one rank behind, or outside the collective the others wait in
    first = min(progress.values(), key=lambda p: p["stage_started_at"])
    return f"every rank alive at {describe(first)}"


def _behind_or_stuck(waiting, progress, finished, stopped_at, label) -> list[str]:
    """The unfinished ranks: whose heartbeat stopped, or who is behind the rest, comes first."""
    if not waiting:
        return []
    end = stopped_at or max(p["heartbeat_at"] for p in progress.values())
    stale = [r for r in waiting if end - progress[r]["heartbeat_at"] > STALE_AFTER_S]
    lowest = min(progress[r]["stage_index"] for r in waiting)
    behind = [r for r in waiting if progress[r]["stage_index"] == lowest]
    ahead = [r for r in waiting if progress[r]["stage_index"] > lowest]
    outside = [r for r in behind if not progress[r].get("in_collective")]
    split = outside if len(outside) < len(behind) else []  # some wait inside, these never came
    culprits = stale or (behind if ahead or finished else split)
    if not culprits:
        where = describe(progress[waiting[0]])
        return [
            f"ranks {rank_list(waiting)} all stuck at {where}, all alive: a collective that "
            "never completed rather than one slow rank; rerun with NCCL_DEBUG=INFO to see "
            "where NCCL waits"
        ]
    lines = []
    for r in culprits:
        entry = progress[r]
        silent = end - entry["heartbeat_at"]
        state = (
            f"its heartbeat stopped {silent:.0f} s before the end (the process hung or died)"
            if r in stale
            else f"alive, {end - entry['stage_started_at']:.0f} s in that stage"
            + ("" if entry.get("in_collective") else ", outside the collective call")
        )
        lines.append(f"{label(r)} did not answer: last at {describe(entry)}, {state}")
    others = [r for r in waiting if r not in culprits]
    if others:
        where = ", ".join(sorted({describe(progress[r]) for r in others}))
        lines.append(f"ranks {rank_list(others)} waited for it at {where}")
    elif finished:
        lines.append(f"the other {len(finished)} rank(s) ended")
    return lines


def rank_list(ranks: list[int]) -> str:
    """[0, 1, 2, 3, 4, 6, 7] -> '0-4, 6, 7'."""
    runs: list[list[int]] = []
    for r in sorted(ranks):
        if runs and r == runs[-1][1] + 1:
            runs[-1][1] = r
        else:
            runs.append([r, r])
    return ", ".join(
        f"{a}" if a == b else f"{a}-{b}" if b > a + 1 else f"{a}, {b}" for a, b in runs
    )
