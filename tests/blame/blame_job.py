"""A small real training-like job for the blame tests: torchrun, gloo on CPU, each rank doing
its own work then an all-reduce each step, writing rigcheck's step log; one rank can be slowed
(a sleep added to its work, as a throttled GPU would add) or stopped (SIGSTOP at a step)."""

import argparse
import datetime
import json
import os
import signal
import subprocess
import sys
import time

import torch
import torch.distributed as dist

from rigcheck.blame.stall_dump import dump_when_stalled
from rigcheck.blame.steplog import StepLog


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--job-dir", required=True)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--work-s", type=float, default=0.02)
    parser.add_argument(
        "--slow-rank", default="-1", help="a rank, or 'rotate': trial t slows t %% world"
    )
    parser.add_argument("--trials", type=int, default=1, help="jobs in a row, each in DIR/trialNNN")
    parser.add_argument("--slow-by", type=float, default=0.5, help="extra work, a fraction")
    parser.add_argument("--work", choices=("sleep", "cpu"), default="sleep")
    parser.add_argument(
        "--competitor",
        action="store_true",
        help="slow the slowed rank with a "
        "busy process on its core (each rank pinned to core rank %% cores) "
        "instead of longer work",
    )
    parser.add_argument("--stop-rank", type=int, default=-1)
    parser.add_argument("--stop-at", type=int, default=5)
    parser.add_argument(
        "--inspector",
        action="store_true",
        help="also write each all-reduce's wall time in NCCL Inspector's v4.0 JSON layout",
    )
    args = parser.parse_args()
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
    for trial in range(args.trials):
        job_dir = f"{args.job_dir}/trial{trial:03d}" if args.trials > 1 else args.job_dir
        slow = trial % dist.get_world_size() if args.slow_rank == "rotate" else int(args.slow_rank)
        run(args, job_dir, slow)
        dist.barrier()
    dist.destroy_process_group()


def run(args: argparse.Namespace, job_dir: str, slow_rank: int) -> None:
    rank = dist.get_rank()
    competitor = None
    if args.competitor:
        core = rank % os.cpu_count()
        os.sched_setaffinity(0, {core})
        if rank == slow_rank:  # a CPU-bound neighbour on the rank's own core: host contention
            competitor = subprocess.Popen([sys.executable, "-c", BUSY, str(core)],
                                          stdout=subprocess.PIPE)  # fmt: skip
            competitor.stdout.readline()  # it is spinning on the core before the steps start
        dist.barrier()
    try:
        steps(args, job_dir, -1 if args.competitor else slow_rank)
    finally:
        if competitor:
            competitor.kill()
            competitor.wait()


BUSY = (
    "import os, sys; os.sched_setaffinity(0, {int(sys.argv[1])}); print(flush=True)\n"
    "while True: pass"
)


def cpu_work(seconds: float) -> None:
    """A fixed amount of CPU work (about SECONDS on the loaded 2-core build machine)."""
    total = 0
    for i in range(int(seconds * 2e6)):
        total += i


def steps(args: argparse.Namespace, job_dir: str, slow_rank: int) -> None:
    rank = dist.get_rank()
    # One host name per rank, as if each rank ran on its own node (the test maps them).
    log = StepLog(job_dir, host=f"node{rank:02d}")
    dump_when_stalled(job_dir, log, stall_s=1.5)
    grad = torch.ones(1024)
    inspector = InspectorLog(job_dir, rank, f"node{rank:02d}") if args.inspector else None
    for step in range(args.steps):
        if rank == args.stop_rank and step == args.stop_at:
            os.kill(os.getpid(), signal.SIGSTOP)
        with log.compute():
            work = args.work_s * (1 + args.slow_by if rank == slow_rank else 1)
            if args.work == "cpu":
                cpu_work(work)
            else:
                time.sleep(work)  # the rank's own work: sleep, so the shared cores' load adds none
            grad.mul_(1.0)
        began = time.perf_counter()
        dist.all_reduce(grad)
        if inspector:
            inspector.record(step, time.perf_counter() - began, grad.numel() * 4)
        log.step_end()
    log.close()


class InspectorLog:
    """NCCL Inspector's per-collective record (plugins/profiler/inspector/inspector_json.cc,
    output version v4.0), one JSON object a line in <host>-pid<pid>.log as the plugin names
    its files; the time is gloo's all-reduce measured on the CPU ("collective_cpu")."""

    def __init__(self, job_dir: str, rank: int, host: str) -> None:
        folder = f"{job_dir}/nccl_inspector"
        os.makedirs(folder, exist_ok=True)
        self.host, self.rank = host, rank
        self.file = open(f"{folder}/{self.host}-pid{os.getpid()}.log", "a")  # noqa: SIM115

    def record(self, step: int, seconds: float, size: int) -> None:
        world = dist.get_world_size()
        line = {
            "header": {"id": "0x6c6f6f67", "comm_name": "unknown", "rank": self.rank,
                       "n_ranks": world, "nnodes": world},
            "metadata": {"inspector_output_format_version": "v4.0", "git_rev": "",
                         "rec_mechanism": "nccl_profiler_interface",
                         "dump_timestamp_us": int(time.time() * 1e6),
                         "hostname": self.host, "pid": os.getpid()},
            "coll_perf": {"coll": "AllReduce", "coll_sn": step, "coll_msg_size_bytes": size,
                          "coll_exec_time_us": int(seconds * 1e6),
                          "coll_timing_source": "collective_cpu",
                          "coll_algobw_gbs": size / seconds / 1e9, "coll_busbw_gbs": 0.0},
        }  # fmt: skip
        self.file.write(json.dumps(line) + "\n")
        self.file.flush()


if __name__ == "__main__":
    main()
