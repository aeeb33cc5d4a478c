"""The history store as `rigcheck fleet`'s input: each node's latest run, and a reference from
the fleet's own history (SuperBench's data diagnosis judges nodes against a baseline of the same
kind: https://microsoft.github.io/superbenchmark/docs/user-tutorial/data-diagnosis)."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from rigcheck.fleet.fields import fleet_fields
from rigcheck.fleet.nodes import FleetInputError, Node, check_one_class
from rigcheck.history import store
from rigcheck.history.series import class_series


def nodes_from_history(engine: Any, url: str) -> list[Node]:
    """One Node per host in the store, with its latest run's certificate (found in SQL: the
    store's other runs and certificates are never read)."""
    nodes = [
        Node(run["node"], Path(f"{url}#{run['run_id']}"), fleet_fields(run["certificate"], url))
        for run in store.latest_runs(engine)
        if run["certificate"] is not None
    ]
    if not nodes:
        raise FleetInputError(f"the history store {url} holds no run yet")
    check_one_class(nodes)
    return nodes


def history_reference(engine: Any, class_name: str | None) -> dict[str, float]:
    """'figure label' -> the median over nodes of each node's median of its stored runs of the
    class (their newest rigcheck.history.series.WINDOW): a node run a hundred times weighs as
    much as a node run once. Read from the pre-aggregated series, not the runs."""
    per_node: dict[str, list[float]] = {}
    with engine.connect() as connection:
        for row in class_series(connection, class_name):
            if row["values"]:
                per_node.setdefault(row["series"], []).append(statistics.median(row["values"]))
    return {key: statistics.median(medians) for key, medians in per_node.items()}
