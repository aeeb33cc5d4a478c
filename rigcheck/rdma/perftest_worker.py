"""What torchrun runs on every node for the RDMA pairs: perftest between node pairs, port to
port, in the node-pair rounds (rigcheck.distributed.pair_schedule).

    torchrun --nnodes=N --nproc-per-node=1 ... -m rigcheck.rdma.perftest_worker --report-dir DIR

torch.distributed (gloo) only schedules: it gathers each node's host and active RDMA ports and
puts a barrier between steps. In each step the lower node of each pair starts the perftest
server on one port, the higher one runs the client against it (ib_write_bw for --seconds, then
ib_read_lat), every pair of the round at once. The client writes
DIR/pairs/roundRR.nodeA-nodeB.<port>.json (both parsed outputs, or an error, and the port's
error counters before and after); rank 0 writes DIR/plan.json first. Judged by
suites/distributed/test_rdma_pairs.py (--rdma-pairs=DIR).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rigcheck.distributed.pair_schedule import pair_schedule
from rigcheck.distributed.progress import write_json_atomically
from rigcheck.facts.fabric.rdma_counters import sample_ports
from rigcheck.rdma.perftest import (
    PerftestOutputError,
    bw_argv,
    lat_argv,
    parse_bw_text,
    parse_lat_text,
)
from rigcheck.rdma.perftest_run import PAIR_SCHEMA, PLAN_SCHEMA, pair_file_name

SERVER_START_S = 2.0  # perftest's server needs a moment to listen before the client connects


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rigcheck.rdma.perftest_worker", description=__doc__)
    parser.add_argument("--report-dir", required=True, type=Path, help="shared results folder")
    parser.add_argument("--seconds", type=int, default=5, help="ib_write_bw duration per port")
    parser.add_argument("--rounds", type=int, help="stop after this many rounds (default: all)")
    parser.add_argument(
        "--use-cuda", action="store_true", help="GPUDirect: buffers in GPU memory, port i on GPU i"
    )
    parser.add_argument("--timeout-s", type=float, default=120.0, help="per perftest command")
    # For rigcheck's own tests: where perftest's programs and /sys are.
    parser.add_argument("--perftest-dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--sysfs-root", type=Path, default=Path("/"), help=argparse.SUPPRESS)
    return parser


def active_ports(root: Path) -> list[str]:
    """'mlx5_0:1' for every RDMA port whose state is ACTIVE."""
    found = []
    classdir = root / "sys/class/infiniband"
    for device in sorted(classdir.iterdir()) if classdir.is_dir() else []:
        for port in sorted((device / "ports").iterdir(), key=lambda p: int(p.name)):
            if "ACTIVE" in (port / "state").read_text():
                found.append(f"{device.name}:{port.name}")
    return found


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    import torch.distributed as dist

    dist.init_process_group(backend="gloo", timeout=dt.timedelta(seconds=args.timeout_s * 4))
    try:
        PerftestJob(dist, args).run()
    except ValueError as exc:
        print(f"rigcheck.rdma.perftest_worker: {exc}", file=sys.stderr)
        return 2
    finally:
        dist.destroy_process_group()
    return 0


class PerftestJob:
    def __init__(self, dist, args):
        self.dist, self.args = dist, args
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self.run_id = os.environ.get("TORCHELASTIC_RUN_ID", "none")

    def run(self) -> None:
        me = {"host": socket.gethostname(), "ports": active_ports(self.args.sysfs_root)}
        nodes: list[Any] = [None] * self.world
        self.dist.all_gather_object(nodes, me)
        schedule = pair_schedule(self.world, self.args.rounds)  # ValueError below 2 nodes
        ports = sorted({p for n in nodes for p in n["ports"]})
        if self.rank == 0:
            self._write_plan(nodes, schedule)
        self.dist.barrier()
        for index, round_ in enumerate(schedule, start=1):
            pair = next((p for p in round_.pairs if self.rank in p), None)
            for port in ports:
                both = pair and all(port in nodes[n]["ports"] for n in pair)
                self._step(index, pair if both else None, port, nodes)

    def _write_plan(self, nodes, schedule) -> None:
        plan = {"schema": PLAN_SCHEMA, "run_id": self.run_id, "nodes": nodes,
                "rounds": [[list(p) for p in r.pairs] for r in schedule],
                "gpudirect": self.args.use_cuda}  # fmt: skip
        self.args.report_dir.mkdir(parents=True, exist_ok=True)
        write_json_atomically(self.args.report_dir / "plan.json", plan)

    def _step(self, index: int, pair, port: str, nodes) -> None:
        """One port of one round: ib_write_bw, then ib_read_lat, each server then client."""
        before = sample_ports(self.args.sysfs_root) if pair else None
        results = {}
        for test, argv, parse in (("write_bw", self._bw, parse_bw_text),
                                  ("read_lat", self._lat, parse_lat_text)):  # fmt: skip
            results[test] = self._exchange(pair, port, nodes, argv, parse)
        if pair and self.rank == pair[1]:
            after = sample_ports(self.args.sysfs_root)
            entry = {"schema": PAIR_SCHEMA, "run_id": self.run_id, "round": index,
                     "nodes": list(pair), "port": port, **results,
                     "counters": {"before": before, "after": after}}  # fmt: skip
            path = self.args.report_dir / "pairs" / pair_file_name(index, *pair, port)
            path.parent.mkdir(parents=True, exist_ok=True)
            write_json_atomically(path, entry)

    def _exchange(self, pair, port: str, nodes, argv, parse) -> dict[str, Any]:
        """Server on the pair's lower node, client on the higher; a barrier around both."""
        server = None
        if pair and self.rank == pair[0]:
            server = subprocess.Popen(argv(port, None), stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True)  # fmt: skip
        self.dist.barrier()
        result: dict[str, Any] = {}
        if pair and self.rank == pair[1]:
            time.sleep(SERVER_START_S)
            result = self._client(argv(port, nodes[pair[0]]["host"]), parse)
        if server is not None:
            try:
                server.communicate(timeout=self.args.timeout_s)
            except subprocess.TimeoutExpired:
                server.kill()
                server.communicate()
        self.dist.barrier()
        return result

    def _client(self, argv: list[str], parse) -> dict[str, Any]:
        try:
            done = subprocess.run(argv, capture_output=True, text=True,
                                  timeout=self.args.timeout_s, check=False)  # fmt: skip
        except (OSError, subprocess.TimeoutExpired) as exc:
            return {"error": f"{argv[0]}: {type(exc).__name__}: {exc}"}
        try:
            return parse(done.stdout)
        except (PerftestOutputError, ValueError) as exc:  # any output: a result or a reason
            tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
            return {"error": f"{argv[0]} exit {done.returncode}: {exc}: {' | '.join(tail)}"}

    def _program(self, argv: list[str]) -> list[str]:
        if self.args.perftest_dir:
            argv[0] = str(self.args.perftest_dir / argv[0])
        return argv

    def _bw(self, port: str, server: str | None) -> list[str]:
        device, _, number = port.partition(":")
        cuda = int(device.rsplit("_", 1)[-1]) if self.args.use_cuda else None
        return self._program(bw_argv(device, int(number), self.args.seconds, server, cuda))

    def _lat(self, port: str, server: str | None) -> list[str]:
        device, _, number = port.partition(":")
        return self._program(lat_argv(device, int(number), server))


if __name__ == "__main__":
    sys.exit(main())
