"""What torchrun runs on every rank of an N-node job for the node-pair collectives.

    torchrun --nnodes=N --nproc-per-node=8 ... -m rigcheck.distributed.pair_worker --report-dir DIR

One process group over all ranks, and one subgroup per pair of nodes (torch.distributed.new_group,
which every rank calls in the same order). Round by round (rigcheck.distributed.pair_schedule),
the ranks of both nodes of each pair all-reduce one buffer within their subgroup, every pair of
the round at once; a barrier on the whole job separates the rounds. Per pair the lowest rank
writes DIR/pairs/roundRR.nodeA-nodeB.json (the iteration times are the slowest rank's, as a
collective ends when its last rank does); rank 0 writes DIR/plan.json first. gloo on CPU, NCCL
on GPUs. Judged by suites/distributed/test_node_pairs.py (--node-pairs=DIR).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from rigcheck.distributed.measure import bandwidth
from rigcheck.distributed.pair_schedule import pair_schedule
from rigcheck.distributed.pair_verdict import PAIR_SCHEMA, PLAN_SCHEMA, pair_file_name
from rigcheck.distributed.progress import write_json_atomically
from rigcheck.distributed.worker import rank_identity, size_arg

DEFAULT_BYTES = (1 << 30, 16 << 20)  # (GPU, CPU): 1 GiB is on NCCL's inter-node plateau


def positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: a whole number above 0")
    return int(text)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rigcheck.distributed.pair_worker", description=__doc__)
    parser.add_argument("--report-dir", required=True, type=Path, help="shared results folder")
    parser.add_argument("--backend", choices=("auto", "nccl", "gloo"), default="auto")
    parser.add_argument("--bytes", type=size_arg, help="all-reduce size (1GiB GPU, 16MiB CPU)")
    parser.add_argument(
        "--rounds", type=positive_int, help="stop after this many rounds (default: all)"
    )
    parser.add_argument("--iters", type=int, default=5, help="timed iterations (median kept)")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--timeout-s", type=float, default=300.0, help="process group timeout")
    parser.add_argument(
        "--ranks-per-node",
        type=positive_int,
        help="group every K consecutive ranks as one node (default: torchrun's node rank); "
        "lets one host stand in for several nodes",
    )
    # For rigcheck's own tests: make one node slow (a sleep in its timed all-reduces).
    parser.add_argument("--slow-node", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--slow-s", type=float, default=0.05, help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    me = rank_identity(os.environ)
    import torch
    import torch.distributed as dist

    backend = args.backend
    if backend == "auto":
        backend = "nccl" if torch.cuda.is_available() and dist.is_nccl_available() else "gloo"
    device = torch.device("cpu")
    if backend == "nccl":
        device = torch.device("cuda", me["local_rank"])
        torch.cuda.set_device(device)
    dist.init_process_group(backend=backend, timeout=dt.timedelta(seconds=args.timeout_s))
    try:
        PairJob(torch, dist, device, args, me, backend).run()
    except PairJobError as exc:
        print(f"rigcheck.distributed.pair_worker: {exc}", file=sys.stderr)
        return 2
    finally:
        dist.destroy_process_group()
    return 0


class PairJobError(Exception):
    """A job that cannot pair nodes as it was started (one node)."""


def group_nodes(everyone: list[tuple[int, str]]) -> list[dict[str, Any]]:
    """[{node, host, ranks}] by node index, from each rank's (node index, host) in rank order."""
    nodes: dict[int, dict[str, Any]] = {}
    for rank, (index, host) in enumerate(everyone):
        entry = nodes.setdefault(index, {"node": index, "host": host, "ranks": []})
        entry["ranks"].append(rank)
    if len(nodes) < 2:
        raise PairJobError(
            f"all {len(everyone)} ranks are on one node: node pairs need torchrun --nnodes=2 or "
            "more (or --ranks-per-node=K to let one host stand in for several nodes)"
        )
    return [nodes[i] for i in sorted(nodes)]


class PairJob:
    def __init__(self, torch, dist, device, args, me: dict[str, Any], backend: str):
        self.torch, self.dist, self.device, self.args = torch, dist, device, args
        self.me, self.backend = me, backend
        self.rank, self.world = dist.get_rank(), dist.get_world_size()

    def run(self) -> None:
        nodes = self._nodes()
        try:
            schedule = pair_schedule(len(nodes), self.args.rounds)
        except ValueError as exc:  # --rounds out of range for this many nodes
            raise PairJobError(f"--rounds={self.args.rounds}: {exc}") from None
        nbytes = self.args.bytes or DEFAULT_BYTES[self.backend != "nccl"]
        if self.rank == 0:
            self._write_plan(nodes, schedule, nbytes)
        # Every rank creates every pair's group, in the same order: new_group's contract.
        pairs = sorted({pair for r in schedule for pair in r.pairs})
        groups = {pair: self.dist.new_group(ranks_of(nodes, pair)) for pair in pairs}
        mine = next(i for i, n in enumerate(nodes) if self.rank in n["ranks"])
        for round_ in schedule:
            pair = next((p for p in round_.pairs if mine in p), None)
            if pair is not None:
                ranks = ranks_of(nodes, pair)
                found = self._measure(groups[pair], ranks, nbytes, mine)
                if self.rank == min(ranks):
                    self._write_pair(round_.index, pair, ranks, nodes, found)
                # Each pair meets once: free its communicator now (NCCL holds buffers per
                # communicator, and a node is in N - 1 of them over a full schedule).
                self.dist.destroy_process_group(groups.pop(pair))
            self.dist.barrier()  # rounds never overlap: a node's link carries one test at a time

    def _nodes(self) -> list[dict[str, Any]]:
        """[{host, ranks}] by node index: torchrun's node rank, or --ranks-per-node groups."""
        per_node = self.args.ranks_per_node
        node = self.rank // per_node if per_node else self.me["node_rank"]
        everyone: list[Any] = [None] * self.world
        self.dist.all_gather_object(everyone, (node, self.me["host"]))
        return group_nodes(everyone)

    def _measure(self, group, ranks: list[int], nbytes: int, mine: int) -> dict[str, Any]:
        torch, dist = self.torch, self.dist
        buf = torch.empty(max(1, nbytes // 4), dtype=torch.float32, device=self.device)
        times = []
        for i in range(self.args.warmup + self.args.iters):
            buf.fill_(self.rank + 1)
            self._barrier(group)
            start = time.perf_counter()
            dist.all_reduce(buf, group=group)
            self._sync()
            if mine == self.args.slow_node:
                time.sleep(self.args.slow_s)
            if i >= self.args.warmup:
                times.append(time.perf_counter() - start)
        verified = bool((buf == sum(r + 1 for r in ranks)).all())
        # The pair's time per iteration is its slowest rank's; wrong anywhere is wrong.
        shared = torch.tensor([*times, 0.0 if verified else 1.0], device=self.device)
        dist.all_reduce(shared, op=dist.ReduceOp.MAX, group=group)
        times, verified = shared[:-1].tolist(), shared[-1].item() == 0.0
        median = statistics.median(times)
        return {
            "bytes": buf.numel() * 4,
            "iters": self.args.iters,
            "warmup": self.args.warmup,
            "times_s": times,
            "median_s": median,
            "verified": verified,
            **bandwidth("allreduce", buf.numel() * 4, median, len(ranks)),
        }

    def _barrier(self, group) -> None:
        if self.device.type == "cuda":
            self.dist.barrier(group=group, device_ids=[self.device.index])
        else:
            self.dist.barrier(group=group)
        self._sync()

    def _sync(self) -> None:
        if self.device.type == "cuda":
            self.torch.cuda.synchronize(self.device)

    def _write_plan(self, nodes, schedule, nbytes: int) -> None:
        plan = {
            "schema": PLAN_SCHEMA,
            "run_id": self.me["run_id"],
            "backend": self.backend,
            "bytes": nbytes,
            "world_size": self.world,
            "nodes": nodes,
            "rounds": [[list(p) for p in r.pairs] for r in schedule],
            "byes": [r.bye for r in schedule],
            "started_at": _now(),
        }
        write_json_atomically(self.args.report_dir / "plan.json", plan)

    def _write_pair(self, index: int, pair, ranks, nodes, found: dict[str, Any]) -> None:
        a, b = pair
        entry = {
            "schema": PAIR_SCHEMA,
            "run_id": self.me["run_id"],
            "round": index,
            "nodes": [a, b],
            "hosts": [nodes[a]["host"], nodes[b]["host"]],
            "ranks": ranks,
            "op": "allreduce",
            "backend": self.backend,
            **found,
            "finished_at": _now(),
        }
        write_json_atomically(self.args.report_dir / "pairs" / pair_file_name(index, a, b), entry)


def ranks_of(nodes: list[dict[str, Any]], pair: tuple[int, int]) -> list[int]:
    return nodes[pair[0]]["ranks"] + nodes[pair[1]]["ranks"]


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


if __name__ == "__main__":
    sys.exit(main())
