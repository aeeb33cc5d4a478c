"""The per-rank step-time log: one small JSONL file per rank that a training loop writes, and
the hook that writes it. No torch import here: the hook reads only the environment torchrun sets.

Format `rigcheck.steps` version 1 (docs/blame.md): the first line is the rank's header,
  {"format": "rigcheck.steps", "version": 1, "rank": 3, "world_size": 8, "host": "node07",
   "local_rank": 3, "gpu": "GPU-5c1e...|0000:53:00.0|3|null", "nics": "mlx5_0:1|null",
   "started_at": 1795928069.1}
then one line per finished step,
  {"step": 12, "end": 1795928075.4, "step_s": 0.412, "compute_s": 0.301}
`compute_s` is the rank's own work in the step, outside collectives: in a synchronous job every
rank's whole step lasts as long as the slowest one's, so only the own work tells ranks apart.
"""

from __future__ import annotations

import json
import os
import socket
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

FORMAT, VERSION = "rigcheck.steps", 1
FILE_GLOB = "rank*.steps.jsonl"


def file_name(rank: int) -> str:
    return f"rank{rank:05d}.steps.jsonl"


def job_header(rank: int | None = None, host: str | None = None) -> dict[str, Any]:
    """Who this rank is and where it runs, from torchrun's and the scheduler's environment."""
    env = os.environ
    rank = int(env.get("RANK", "0")) if rank is None else rank
    return {
        "format": FORMAT,
        "version": VERSION,
        "rank": rank,
        "world_size": int(env.get("WORLD_SIZE", "1")),
        "host": host or socket.gethostname().split(".")[0],
        "local_rank": int(env.get("LOCAL_RANK", "0")),
        # The rank's GPU as CUDA names it: the visible list and the local rank pick one of it.
        "cuda_visible_devices": env.get("CUDA_VISIBLE_DEVICES"),
        "nics": env.get("NCCL_IB_HCA"),
        "job_id": env.get("SLURM_JOB_ID") or env.get("TORCHELASTIC_RUN_ID"),
        "started_at": time.time(),
    }


class StepLog:
    """Write this rank's step times into JOB_DIR/steps/. In a loop:

    log = StepLog(job_dir)
    for batch in data:
        with log.compute():      # the rank's own work, no collective inside
            loss = forward(batch)
        loss.backward()          # under DDP the all-reduce runs in here: not timed
        with log.compute():
            optimizer.step()
        log.step_end()
    """

    def __init__(
        self, job_dir: str | os.PathLike[str], rank: int | None = None, host: str | None = None
    ) -> None:
        header = job_header(rank, host)
        folder = Path(job_dir) / "steps"
        folder.mkdir(parents=True, exist_ok=True)
        self.rank = header["rank"]
        self.path = folder / file_name(self.rank)
        self._file = self.path.open("w", encoding="utf-8", buffering=1)  # a line each, flushed
        self._write(header)
        self.step = 0
        self._begun = time.monotonic()
        self._compute_s: float | None = None
        self.last_end = time.monotonic()
        self.closed = False

    @contextmanager
    def compute(self):
        started = time.monotonic()
        try:
            yield
        finally:
            self._compute_s = (self._compute_s or 0.0) + time.monotonic() - started

    def add_compute(self, seconds: float) -> None:
        """For callbacks that time the own work themselves (the Trainer and Lightning ones)."""
        self._compute_s = (self._compute_s or 0.0) + seconds

    def step_end(self) -> None:
        now = time.monotonic()
        record = {"step": self.step, "end": time.time(), "step_s": round(now - self._begun, 6)}
        if self._compute_s is not None:
            record["compute_s"] = round(self._compute_s, 6)
        self._write(record)
        self.step += 1
        self._begun, self._compute_s, self.last_end = now, None, now

    def close(self) -> None:
        self.closed = True
        self._file.close()

    def _write(self, record: dict[str, Any]) -> None:
        self._file.write(json.dumps(record, separators=(",", ":")) + "\n")
