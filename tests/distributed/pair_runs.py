"""Node-pair run folders written as rigcheck.distributed.pair_worker writes them, for replays:
N nodes, a full round-robin, every pair at one rate unless told otherwise."""

from __future__ import annotations

from pathlib import Path

from rigcheck.distributed.pair_schedule import pair_schedule
from rigcheck.distributed.pair_verdict import PAIR_SCHEMA, PLAN_SCHEMA, pair_file_name
from rigcheck.distributed.progress import write_json_atomically

RUN_ID = "rigcheck-pairs-test"


def write_pair_run(
    folder: Path,
    nodes: int,
    rate: float = 40.0,
    rates: dict[tuple[int, int], float] | None = None,  # (a, b) -> GB/s, a < b
    rounds: int | None = None,
    drop: tuple[tuple[int, int], ...] = (),  # pairs whose result file is missing
    hosts: list[str] | None = None,
) -> Path:
    hosts = hosts or [f"gpu-node-{i:02d}" for i in range(nodes)]
    schedule = pair_schedule(nodes, rounds)
    plan = {
        "schema": PLAN_SCHEMA,
        "run_id": RUN_ID,
        "backend": "nccl",
        "bytes": 1 << 30,
        "world_size": 8 * nodes,
        "nodes": [
            {"node": i, "host": h, "ranks": list(range(8 * i, 8 * i + 8))}
            for i, h in enumerate(hosts)
        ],
        "rounds": [[list(p) for p in r.pairs] for r in schedule],
        "byes": [r.bye for r in schedule],
    }
    write_json_atomically(folder / "plan.json", plan)
    for r in schedule:
        for a, b in r.pairs:
            if (a, b) in drop:
                continue
            busbw = (rates or {}).get((a, b), rate)
            entry = {
                "schema": PAIR_SCHEMA,
                "run_id": RUN_ID,
                "round": r.index,
                "nodes": [a, b],
                "hosts": [hosts[a], hosts[b]],
                "op": "allreduce",
                "verified": True,
                "busbw_gbps": busbw,
                "algbw_gbps": busbw * 16 / 30,
            }
            write_json_atomically(folder / "pairs" / pair_file_name(r.index, a, b), entry)
    return folder


def slow_node(nodes: int, node: int, fast: float = 40.0, slow: float = 20.0):
    return {(a, b): slow for a in range(nodes) for b in range(a + 1, nodes) if node in (a, b)}
