"""The folder an RDMA pair job writes, read back: plan.json and one file per pair, round and port.

    plan.json                                   nodes (host, RDMA ports), rounds, GPUDirect
    pairs/round02.node1-node3.mlx5_0-1.json     ib_write_bw and ib_read_lat between node 1's and
                                                node 3's mlx5_0 port 1, parsed (or an error)

Ports pair by name, rail to rail (mlx5_0 with mlx5_0), as rail-optimised fabrics cable them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rigcheck.distributed.run_folder import RunFolder
from rigcheck.errors import RigcheckError

PLAN_SCHEMA = "rigcheck.rdma-pairs-plan/1"
PAIR_SCHEMA = "rigcheck.rdma-pair/1"


class RdmaRunError(RigcheckError):
    """An RDMA pair run folder that cannot be read."""


RDMA_FOLDER = RunFolder(
    folder="an RDMA pair run folder",
    writer="rigcheck.rdma.perftest_worker",
    plan_schema=PLAN_SCHEMA,
    pair_schema=PAIR_SCHEMA,
    plan_fields={"nodes": list, "rounds": list},
    pair_fields={"round": int, "nodes": list, "port": str, "write_bw": dict, "read_lat": dict},
    error=RdmaRunError,
)


def pair_file_name(round_index: int, a: int, b: int, port: str) -> str:
    return f"round{round_index:02d}.node{a}-node{b}.{port.replace(':', '-')}.json"


@dataclass
class RdmaRun:
    source: str
    plan: dict[str, Any]
    pairs: dict[tuple[int, int, int, str], dict[str, Any]]  # (round, a, b, port) -> result

    def name(self, node: int) -> str:
        hosts = [n["host"] for n in self.plan["nodes"]]
        return hosts[node] if len(set(hosts)) == len(hosts) else f"node{node}"

    def ports(self) -> list[str]:
        """Every port name any node has, sorted."""
        return sorted({p for n in self.plan["nodes"] for p in n["ports"]})

    def planned(self):
        """(round, a, b, port) the plan asks for, and why one cannot run (a node lacks it)."""
        for index, round_pairs in enumerate(self.plan["rounds"], start=1):
            for a, b in round_pairs:
                for port in self.ports():
                    lacking = [n for n in (a, b) if port not in self.plan["nodes"][n]["ports"]]
                    yield (index, a, b, port), lacking

    def missing(self) -> list[str]:
        """Planned measurements with no result or a failed one: fail closed, naming them."""
        lines = []
        for (index, a, b, port), lacking in self.planned():
            where = f"round {index} {self.name(a)} <-> {self.name(b)} on {port}"
            entry = self.pairs.get((index, a, b, port))
            if lacking:
                lines.append(f"{where}: {', '.join(self.name(n) for n in lacking)} has no {port}")
            elif entry is None:
                lines.append(f"{where}: no result ({pair_file_name(index, a, b, port)})")
            else:
                lines += [
                    f"{where}: {test} failed: {entry[test]['error']}"
                    for test in ("write_bw", "read_lat")
                    if "error" in entry[test]
                ]
        return lines


def load_rdma_run(path: str | Path) -> RdmaRun:
    plan, entries = RDMA_FOLDER.read(path)
    pairs = {}
    for entry in entries:
        a, b = entry["nodes"]
        pairs[(entry["round"], a, b, entry["port"])] = entry
    return RdmaRun(str(path), plan, pairs)
