"""Run blame_job.py under a real torchrun (gloo, CPU) into a job folder; for a stopped rank,
wait until the other ranks' stall dumps are written, then end the job (SIGKILL to its group:
a SIGSTOPped rank would sit out a SIGTERM)."""

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

JOB = Path(__file__).with_name("blame_job.py")
ENV = {"TORCH_FR_BUFFER_SIZE": "200", "OMP_NUM_THREADS": "1"}


def run_job(job_dir: Path, nproc: int, *options: str, timeout_s: float = 120) -> int | None:
    """The job's return code, or None when it was ended after its stall dumps (a hang)."""
    argv = [sys.executable, "-m", "torch.distributed.run", "--standalone",
            f"--nproc_per_node={nproc}", "--monitor_interval=1", str(JOB),
            f"--job-dir={job_dir}", *options]  # fmt: skip
    stopped = "--stop-rank" in " ".join(options)
    log = (job_dir.parent / f"{job_dir.name}.torchrun.log").open("wb")
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                            env={**os.environ, **ENV})  # fmt: skip
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                return proc.returncode
            if stopped and len(_dumps(job_dir)) >= nproc - 1:
                time.sleep(0.5)  # let the last dump's rename finish
                return None
            time.sleep(0.2)
        raise TimeoutError(f"the torchrun job in {job_dir} ran past {timeout_s} s")
    finally:
        # torchrun starts each rank in a session of its own (torch's SubprocessHandler), out of
        # reach of killpg: a rank stopped with SIGSTOP was left behind after every serial pass.
        ranks = _ranks(proc.pid)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        for rank in ranks:
            with contextlib.suppress(psutil.NoSuchProcess):
                rank.kill()
        proc.wait()
        log.close()


def _ranks(pid: int) -> list[psutil.Process]:
    """torchrun's processes below it, while it still runs (its ranks and theirs)."""
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _dumps(job_dir: Path) -> list[Path]:
    folder = job_dir / "flight_recorder"
    return [p for p in folder.iterdir() if not p.name.endswith(".tmp")] if folder.is_dir() else []
