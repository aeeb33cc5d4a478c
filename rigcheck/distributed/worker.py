"""What torchrun runs on every rank: start the process group, check and time the collectives.

    torchrun --standalone --nproc_per_node 8 -m rigcheck.distributed.worker --report-dir DIR

Each rank writes DIR/results/<host>.rank<R>.json (and keeps DIR/progress/<host>.rank<R>.json
fresh while it runs), so a shared DIR collects every node's results under its host name. NCCL on
GPUs (RCCL on ROCm), gloo on CPU. Every collective is bounded by the process group's timeout; a
rank that fails records why and exits non-zero, and torchrun then stops the others.
"""

from __future__ import annotations

import argparse
import datetime as dt
import inspect
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

from rigcheck.distributed.progress import STAGES, Progress, rank_file_name, write_json_atomically
from rigcheck.facts.fabric.nccl_env import nccl_environment, nvls_state, parse_nccl_log
from rigcheck.facts.fabric.rdma_counters import sample_ports
from rigcheck.memory.units import parse_size

SCHEMA = "rigcheck.collectives/1"
GIB, MIB = 2**30, 2**20
# (GPU, CPU) defaults. 8 GiB is where the class figures are quoted (nccl-tests at 8-16 GiB);
# gloo on a small CPU host gets a size that finishes in well under a second per iteration.
DEFAULT_BYTES = (8 * GIB, 64 * MIB)
DEFAULT_CHECK_BYTES = (64 * MIB, 1 * MIB)
DEFAULT_P2P_BYTES = 512 * MIB  # nvbandwidth's default buffer


def size_arg(text: str) -> int:
    try:
        return parse_size(text)
    except Exception as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rigcheck.distributed.worker", description=__doc__)
    parser.add_argument("--report-dir", required=True, type=Path, help="shared results folder")
    parser.add_argument("--backend", choices=("auto", "nccl", "gloo"), default="auto")
    parser.add_argument("--bytes", type=size_arg, help="collective size (8GiB GPU, 64MiB CPU)")
    parser.add_argument("--check-bytes", type=size_arg, help="all-reduce correctness check size")
    parser.add_argument("--p2p-bytes", type=size_arg, default=DEFAULT_P2P_BYTES)
    parser.add_argument("--no-p2p", action="store_true", help="skip the GPU pair copies")
    parser.add_argument("--iters", type=int, default=5, help="timed iterations (median kept)")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--timeout-s", type=float, default=300.0, help="process group timeout")
    # For rigcheck's own tests: make one rank stop answering at a stage, to produce a hang.
    parser.add_argument("--stall-rank", type=int, help=argparse.SUPPRESS)
    parser.add_argument(
        "--stall-at", choices=STAGES, default="allreduce_check", help=argparse.SUPPRESS
    )
    return parser


def rank_identity(environ) -> dict[str, Any]:
    """Who this rank is, from the variables torchrun sets."""
    return {
        "host": socket.gethostname(),
        "rank": int(environ.get("RANK", 0)),
        "world_size": int(environ.get("WORLD_SIZE", 1)),
        "local_rank": int(environ.get("LOCAL_RANK", 0)),
        "local_world_size": int(environ.get("LOCAL_WORLD_SIZE", 1)),
        "node_rank": int(environ.get("GROUP_RANK", 0)),
        "run_id": environ.get("TORCHELASTIC_RUN_ID"),  # torchrun's --rdzv-id (a uuid standalone)
    }


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    me = rank_identity(os.environ)
    progress = Progress(args.report_dir / "progress", me).start()
    result: dict[str, Any] = {"schema": SCHEMA, **me, "pid": os.getpid(), "started_at": _now()}
    code = 0
    try:
        Worker(args, me, progress, result).run()
    except Exception as exc:  # recorded in the result; the exit code tells torchrun
        result["error"] = f"{type(exc).__name__}: {exc}".strip()
        result["failed_stage"] = progress.state["stage"]
        code = 1
    finally:
        progress.stage("write_result")
        result["finished_at"] = _now()
        path = args.report_dir / "results" / rank_file_name(me["host"], me["rank"])
        write_json_atomically(path, result)
        progress.stage("done")
        progress.stop()
    return code


class Worker:
    def __init__(self, args: argparse.Namespace, me: dict[str, Any], progress, result):
        self.args, self.me, self.progress, self.result = args, me, progress, result
        name = rank_file_name(me["host"], me["rank"]).replace(".json", ".log")
        self.nccl_log = args.report_dir / "nccl" / name

    def run(self) -> None:
        nccl = nccl_environment(os.environ, Path.home())
        self.result["interfaces"] = sorted(name for _, name in socket.if_nameindex())
        import torch
        import torch.distributed as dist

        backend = self._backend(torch, dist)
        nccl["rigcheck_set"] = self._capture_nccl_log() if backend == "nccl" else {}
        device = self._device(torch, backend)
        gpu = backend == "nccl"
        sizes = {
            "bytes": self.args.bytes or DEFAULT_BYTES[not gpu],
            "check_bytes": self.args.check_bytes or DEFAULT_CHECK_BYTES[not gpu],
        }
        self.result.update(backend=backend, torch_version=torch.__version__, settings=sizes)
        self.result["nccl"] = nccl
        self.result["nccl"]["version"] = _torch_nccl_version(torch) if gpu else None
        rdma = {"before": sample_ports()} if self.me["local_rank"] == 0 else None
        self._init(torch, dist, backend, device)
        self._collectives(torch, dist, device, sizes)
        self.progress.stage("destroy_process_group")
        dist.destroy_process_group()
        if rdma is not None:  # a link that flapped during the job (suites/distributed)
            self.result["rdma_counters"] = {**rdma, "after": sample_ports()}
        self._read_nccl_log(backend)
        if gpu and self.me["local_rank"] == 0 and not self.args.no_p2p:
            from rigcheck.distributed.measure import peer_copies

            self.progress.stage("p2p")
            torch.cuda.empty_cache()  # the collectives' buffers, cached on this rank's GPU
            args = self.args
            self.result["p2p"] = peer_copies(
                torch, args.p2p_bytes, args.iters, args.warmup, self.progress
            )

    def _capture_nccl_log(self) -> dict[str, str]:
        """NCCL's INFO lines to a file, unless the environment asks for another level: they say
        which NCCL loaded and whether NVLS is available. Set before NCCL reads its settings."""
        if "NCCL_DEBUG" in os.environ:
            return {}
        self.nccl_log.parent.mkdir(parents=True, exist_ok=True)
        setting = {"NCCL_DEBUG": "INFO", "NCCL_DEBUG_FILE": str(self.nccl_log)}
        os.environ.update(setting)
        return setting

    def _backend(self, torch, dist) -> str:
        if self.args.backend != "auto":
            return self.args.backend
        return "nccl" if torch.cuda.is_available() and dist.is_nccl_available() else "gloo"

    def _device(self, torch, backend: str):
        if backend != "nccl":
            self.result["device"] = {"kind": "cpu"}
            self.progress.note(device={"kind": "cpu"})
            return torch.device("cpu")
        device = torch.device("cuda", self.me["local_rank"])
        torch.cuda.set_device(device)
        from rigcheck.distributed.measure import bus_id

        props = torch.cuda.get_device_properties(device)
        self.result["device"] = {
            "kind": "cuda",
            "index": device.index,
            "name": props.name,
            "bus_id": bus_id(props),
            "visible_devices": torch.cuda.device_count(),
            "peer_access": {
                str(j): torch.cuda.can_device_access_peer(device.index, j)
                for j in range(torch.cuda.device_count())
                if j != device.index
            },
        }
        self.progress.note(device={"kind": "cuda", "index": device.index})
        return device

    def _init(self, torch, dist, backend: str, device) -> None:
        self.progress.stage("init_process_group", f"{backend}, timeout {self.args.timeout_s} s")
        self._stall_here("init_process_group")
        options: dict[str, Any] = {
            "backend": backend,
            "timeout": dt.timedelta(seconds=self.args.timeout_s),
        }
        if (
            backend == "nccl"
            and "device_id" in inspect.signature(dist.init_process_group).parameters
        ):
            options["device_id"] = device  # binds the rank to its GPU and starts NCCL now
        started = time.perf_counter()
        dist.init_process_group(**options)
        self.result["init"] = {"ok": True, "seconds": round(time.perf_counter() - started, 3)}

    def _collectives(self, torch, dist, device, sizes: dict[str, int]) -> None:
        from rigcheck.distributed.measure import Collectives

        run = Collectives(torch, dist, device, self.progress, self.args.iters, self.args.warmup)
        self._stall_here("allreduce_check")
        self.result["allreduce_check"] = run.check_allreduce(max(1, sizes["check_bytes"] // 4))
        if run.world < 2:
            skipped = {
                "skipped": "one rank: nothing crosses a link, bus bandwidth is 0 by definition"
            }
            self.result.update(allreduce=skipped, allgather=skipped, reducescatter=skipped)
            return
        big, chunk = run.buffers(sizes["bytes"])
        for op in ("allreduce", "allgather", "reducescatter"):
            self._stall_here(op)
            self.result[op] = (
                run.allreduce(big) if op == "allreduce" else getattr(run, op)(big, chunk)
            )
        del big, chunk

    def _read_nccl_log(self, backend: str) -> None:
        nccl = self.result["nccl"]
        log = None
        if nccl["rigcheck_set"] and self.nccl_log.exists():
            log = parse_nccl_log(self.nccl_log.read_text(errors="replace"))
        nccl["log"] = log
        used, why = nvls_state(backend, nccl["effective"], log)
        nccl["nvls"] = {"used": used, "why": why}

    def _stall_here(self, stage: str) -> None:
        """Only for rigcheck's own tests (--stall-rank): stop answering, heartbeat still on."""
        if self.args.stall_rank == self.me["rank"] and self.args.stall_at == stage:
            self.progress.stage(stage, "stalled on purpose by --stall-rank")
            while True:
                time.sleep(60)


def _torch_nccl_version(torch) -> str | None:
    try:
        version = torch.cuda.nccl.version()
    except Exception:
        return None
    return ".".join(map(str, version)) if isinstance(version, tuple) else str(version)


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


if __name__ == "__main__":
    sys.exit(main())
