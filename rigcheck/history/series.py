"""A node's figure series, pre-aggregated: per "figure label", how many runs measured it and its
newest WINDOW values. The check a run pays to record itself (drift against the node's past)
reads these rows, never the runs, so it costs the same after a year of five-minute runs as after
three (issue 43). Drift is judged on the window: the median of the last WINDOW runs."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from rigcheck.history.schema import series

WINDOW = 100  # values kept per series: at five-minute runs, the last eight hours


def series_label(figure: str, label: str | None) -> str:
    return " ".join(p for p in (figure, label) if p)


def fold(found: dict[str, dict], class_name: str | None, at: str, entry: Mapping) -> None:
    """Add one figure row (rows.figure_rows) of the run started `at` to `found` (label -> row)."""
    key = series_label(entry["figure"], entry["label"])
    row = found.setdefault(key, {"series": key, "figure": entry["figure"], "runs": 0, "recent": []})
    row.update(unit=entry["unit"], class_name=class_name)
    row["runs"] += 1
    row["recent"].append([at, float(entry["measured"])])
    row["recent"] = sorted(row["recent"], key=lambda p: p[0])[-WINDOW:]


def update_series(
    connection: sa.Connection, node: str, class_name: str | None, at: str, figures: list[dict]
) -> None:
    """Fold one run's figures into the node's series; the same run written again replaces its
    own values (its start time names them)."""
    fresh: dict[str, dict] = {}
    for entry in figures:
        fold(fresh, class_name, at, entry)
    if not fresh:
        return
    query = sa.select(series).where(series.c.node == node, series.c.series.in_(list(fresh)))
    stored = {row.series: row for row in connection.execute(query)}
    for key, new in fresh.items():
        old = stored.get(key)
        if old is None:
            connection.execute(series.insert().values(**_row(new), node=node))
            continue
        earlier = [p for p in json.loads(old.recent) if p[0] != at]
        replaced = len(json.loads(old.recent)) - len(earlier)
        new["recent"] = sorted(earlier + new["recent"], key=lambda p: p[0])[-WINDOW:]
        new["runs"] += old.runs - replaced
        connection.execute(series.update().where(series.c.id == old.id).values(**_row(new)))


def _row(entry: dict[str, Any]) -> dict[str, Any]:
    return {**entry, "recent": json.dumps(entry["recent"])}


def node_series(connection: sa.Connection, node: str) -> list[dict[str, Any]]:
    """The node's series, each with `recent` as a list of (started_at, value)."""
    query = sa.select(series).where(series.c.node == node).order_by(series.c.series)
    return [
        {**row._mapping, "recent": [tuple(p) for p in json.loads(row.recent)]}
        for row in connection.execute(query)
    ]


def class_series(connection: sa.Connection, class_name: str | None) -> list[dict[str, Any]]:
    """Every node's series of one class (the fleet's reference from its own history)."""
    query = sa.select(series.c.node, series.c.series, series.c.recent).where(
        series.c.class_name == class_name
        if class_name is not None
        else series.c.class_name.is_(None)
    )
    return [
        {"node": row.node, "series": row.series, "values": [p[1] for p in json.loads(row.recent)]}
        for row in connection.execute(query)
    ]
