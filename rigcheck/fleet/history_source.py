"""The history store as `rigcheck fleet`'s input: each node's latest run, and a reference from
the fleet's own history (SuperBench's data diagnosis judges nodes against a baseline of the same
kind: https://microsoft.github.io/superbenchmark/docs/user-tutorial/data-diagnosis)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from rigcheck.fleet.judge import figures_of
from rigcheck.fleet.nodes import FleetInputError, Node, check_one_class
from rigcheck.history import store


def nodes_from_history(engine: Any, url: str) -> list[Node]:
    """One Node per host in the store, with its latest run's certificate."""
    runs = store.load_runs(engine)
    if not runs:
        raise FleetInputError(f"the history store {url} holds no run yet")
    latest: dict[str, dict[str, Any]] = {}
    for run in runs:  # oldest first: the last kept is the newest
        latest[run["node"]] = run
    nodes = [
        Node(name, Path(f"{url}#{run['run_id']}"), json.loads(run["certificate"]))
        for name, run in sorted(latest.items())
    ]
    check_one_class(nodes)
    return nodes


def history_reference(engine: Any, class_name: str | None) -> dict[str, float]:
    """'figure label' -> the median over nodes of each node's median in every stored run of the
    class: a node run a hundred times weighs as much as a node run once."""
    per_node: dict[str, dict[str, list[float]]] = {}
    for run in store.load_runs(engine):
        if run["class_name"] != class_name:
            continue
        node = Node(run["node"], Path(run["run_id"]), json.loads(run["certificate"]))
        for key, entry in figures_of(node).items():
            per_node.setdefault(key, {}).setdefault(run["node"], []).append(entry["measured"])
    return {
        key: statistics.median(statistics.median(v) for v in nodes.values())
        for key, nodes in per_node.items()
    }
