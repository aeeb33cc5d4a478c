"""Start one torchrun job on this node and wait for it, with a watchdog.

torchrun is run as `python -m torch.distributed.run` with this interpreter, so the job uses the
same torch as the suite. Its output goes to <report-dir>/torchrun.log. Past the watchdog the
whole process group it started is stopped (SIGTERM, then SIGKILL), and launch.json records when,
so the progress files can say which rank stopped answering.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rigcheck.distributed.progress import write_json_atomically
from rigcheck.distributed.results import CollectiveRun, load_run

WORKER = "rigcheck.distributed.worker"
GRACE_S = 15.0  # after SIGTERM, before SIGKILL
LOG_TAIL_CHARS = 4000


def torchrun_argv(nproc: int, report_dir: Path, worker_options: list[str]) -> list[str]:
    """The single-node command; options use torchrun's underscore spellings, which every
    torchrun since torch 1.10 accepts."""
    return [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc_per_node={nproc}",
        "--monitor_interval=1",
        "-m",
        WORKER,
        f"--report-dir={report_dir}",
        *worker_options,
    ]


def run_collectives(
    nproc: int,
    report_dir: Path,
    worker_options: list[str],
    timeout_s: float,
    tick: Callable[[str], None] | None = None,
) -> CollectiveRun:
    """The job; TICK (if given) gets the ranks' stages about twice a second while it runs."""
    report_dir.mkdir(parents=True, exist_ok=True)
    argv = torchrun_argv(nproc, report_dir, worker_options)
    launch = run_torchrun(argv, report_dir, timeout_s, tick)
    return load_run(report_dir, launch)


def ranks_so_far(report_dir: Path) -> str:
    """'rank 0 allreduce, rank 1 allgather': each rank's stage, from its progress file."""
    stages = {}
    for path in sorted((report_dir / "progress").glob("*.rank*.json")):
        with contextlib.suppress(OSError, ValueError):
            entry = json.loads(path.read_text())
            stages[entry["rank"]] = entry["stage"]
    if not stages:
        return "waiting for the ranks"
    return ", ".join(f"rank {rank} {stage}" for rank, stage in sorted(stages.items()))


def _wait(proc: subprocess.Popen, timeout_s: float, tick: Callable[[], None] | None) -> None:
    """proc.wait(timeout_s), calling TICK twice a second meanwhile."""
    if tick is None:
        proc.wait(timeout=timeout_s)
        return
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            proc.wait(timeout=min(0.5, max(deadline - time.monotonic(), 0)))
            return
        except subprocess.TimeoutExpired:
            if time.monotonic() >= deadline:
                raise
            tick()


def run_torchrun(
    argv: list[str],
    report_dir: Path,
    timeout_s: float,
    tick: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    log = report_dir / "torchrun.log"
    started = time.time()
    stopped_at = None
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            _wait(proc, timeout_s, tick and (lambda: tick(ranks_so_far(report_dir))))
        except subprocess.TimeoutExpired:
            stopped_at = time.time()
            stop_group(proc)
        except BaseException:  # Ctrl-C: in its own session the job would not get the SIGINT,
            stop_group(proc)  # and would keep every GPU busy after pytest has gone
            raise
    record = {
        "argv": argv,
        "returncode": proc.returncode,
        "timed_out": stopped_at is not None,
        "timeout_s": timeout_s,
        "started_at": started,
        "stopped_at": stopped_at,
        "seconds": round(time.time() - started, 1),
        "log": str(log),
        "log_tail": log.read_text(errors="replace")[-LOG_TAIL_CHARS:],
    }
    write_json_atomically(report_dir / "launch.json", record)
    return record


def stop_group(proc: subprocess.Popen) -> None:
    """torchrun and its workers: the process group this module started, and nothing else."""
    for sig, wait_s in ((signal.SIGTERM, GRACE_S), (signal.SIGKILL, GRACE_S)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue
