"""RDMA pair run folders for the replays: the plan and pair files rigcheck.rdma.perftest_worker
writes, with each pair's result parsed from a real perftest output (fixtures/rdma/perftest/)
and its bandwidth or latency then set by the test where a fault is replayed: those figures are
written by hand, not measured."""

from __future__ import annotations

import json
from pathlib import Path

from rigcheck.distributed.pair_schedule import pair_schedule
from rigcheck.rdma.perftest import parse_json, parse_lat_text
from rigcheck.rdma.perftest_run import PAIR_SCHEMA, PLAN_SCHEMA, pair_file_name

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "rdma" / "perftest"
RUN_ID = "replay-1"


def write_run(root: Path, nodes: int = 4, ports: int = 2, bw: float = 392.0, slow=None,
              lat=None, gpudirect: bool = True, drop=(), flaps=()) -> Path:  # fmt: skip
    """slow: {(a, b, port): Gb/s} or {(node, None, port): Gb/s}; lat: {(a, b, port): p99 us};
    flaps: (round, a, b, port) whose link went down once during the pair's traffic."""
    names = [f"mlx5_{i}:1" for i in range(ports)]
    rounds = [[list(p) for p in r.pairs] for r in pair_schedule(nodes)]
    hosts = [{"host": f"gpu-node-{n:02d}", "ports": names} for n in range(nodes)]
    plan = {"schema": PLAN_SCHEMA, "run_id": RUN_ID, "gpudirect": gpudirect, "rounds": rounds,
            "nodes": hosts}  # fmt: skip
    (root / "pairs").mkdir(parents=True, exist_ok=True)
    (root / "plan.json").write_text(json.dumps(plan))
    write = parse_json((FIXTURES / "ib_write_bw-out_json.json").read_text())
    read = parse_lat_text((FIXTURES / "ib_read_lat-text.txt").read_text())
    for index, round_pairs in enumerate(rounds, start=1):
        for a, b in round_pairs:
            for port in names:
                if (index, a, b, port) in drop:
                    continue
                rate = (slow or {}).get((a, b, port)) or next(
                    (v for (n, none, p), v in (slow or {}).items()
                     if none is None and p == port and n in (a, b)), bw)  # fmt: skip
                p99 = (lat or {}).get((a, b, port), read["p99_us"])
                entry = {"schema": PAIR_SCHEMA, "run_id": RUN_ID, "round": index,
                         "nodes": [a, b], "port": port,
                         "write_bw": {**write, "bw_avg_gbps": rate},
                         "read_lat": {**read, "p99_us": p99},
                         "counters": counters(port, (index, a, b, port) in flaps)}  # fmt: skip
                (root / "pairs" / pair_file_name(index, a, b, port)).write_text(json.dumps(entry))
    return root


def counters(port: str, flapped: bool) -> dict:
    """The client's port counters before and after: all 0 (as a healthy port in prometheus/procfs's
    sysfs fixture), link_downed 1 after where the test replays a flap."""

    def sample(downed: int) -> dict:
        block = {"counters": {"symbol_error": 0, "link_downed": downed, "link_error_recovery": 0,
                              "port_rcv_errors": 0}, "hw_counters": None}  # fmt: skip
        return {"t": 0.0, "ports": {port.replace(":", "/"): block}}

    return {"before": sample(0), "after": sample(1 if flapped else 0)}
