"""Dump this rank's flight recorder when its steps stop: what NCCL's watchdog does on a timeout
(TORCH_NCCL_DUMP_ON_TIMEOUT), for any backend and before the job's own timeout kills it.

A rank stopped outright (SIGSTOP, a wedged driver call holding the GIL) writes nothing: the
others' dumps name it as the one they wait on. Needs TORCH_FR_BUFFER_SIZE (or the older
TORCH_NCCL_TRACE_BUFFER_SIZE) > 0 in the job's environment, else the dumps hold no entries.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from rigcheck.blame.steplog import StepLog

FOLDER = "flight_recorder"
PREFIX = "nccl_trace_rank_"  # torch's default dump name, so its own dumps sit beside these


def dump_when_stalled(
    job_dir: str | os.PathLike[str], log: StepLog, stall_s: float, poll_s: float = 0.2
) -> threading.Thread:
    """Start a daemon thread that dumps once each time no step has ended for STALL_S, until
    the log is closed (a finished job is not a stalled one)."""
    folder = Path(job_dir) / FOLDER
    folder.mkdir(parents=True, exist_ok=True)

    path = folder / f"{PREFIX}{log.rank}"

    def watch() -> None:
        dumped_for = None
        while not log.closed:
            time.sleep(poll_s)
            if dumped_for is not None and dumped_for != log.last_end:
                path.unlink(missing_ok=True)  # the steps went on: it was a pause, not a hang
                dumped_for = None
            stalled = time.monotonic() - log.last_end > stall_s
            if stalled and dumped_for is None and not log.closed:
                write_dump(path)
                dumped_for = log.last_end

    thread = threading.Thread(target=watch, name="rigcheck-stall-dump", daemon=True)
    thread.start()
    return thread


def write_dump(path: Path) -> None:
    import torch  # the job's own torch; imported only once a stall is seen

    c10d = torch._C._distributed_c10d
    dump = getattr(c10d, "_dump_fr_trace", None) or c10d._dump_nccl_trace
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(dump())
    tmp.replace(path)  # a reader never sees half a dump
