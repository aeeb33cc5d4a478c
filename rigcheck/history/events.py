"""The kernel-log events a run read (facts' kernel_log: Xids, SXids, NVRM and amdgpu records, and
the driver error lines no rule explains) as rows of the store's `events`, and read back for a
node or a board.

A five-minute gate reads the same boot's log every time: an Xid logged once is read by every run
until the node reboots. A line is one event per node, kept with the first run that read it (its
line id: a digest of the node, the source, the kernel's timestamp and the text), so a year of runs
stores it once and pruning that run removes it."""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from rigcheck.history import rows
from rigcheck.history.schema import events

# A driver's error line no rule reads (facts/kernel_log/unexplained.py): most are NVRM lines at
# the kernel's default level whose text says error, fail, timeout ... A run warns about them
# once; stored, a fleet operator sees a node's or a board's over time.
UNEXPLAINED = "unexplained"
SOURCES = (
    ("xid_events", "xid"),
    ("nvrm_events", None),
    ("amdgpu_events", "amdgpu"),
    ("unexplained_events", UNEXPLAINED),
)
SXID = "sxid"  # an NVRM record of this kind is the NVSwitch driver's SXid (nvrm.py)
COLUMNS = ("time (UTC)", "node", "GPU", "serial", "event", "line")  # the terminal's and the page's
IN_LIST = 900  # line ids looked up per query: under SQLite's bound-parameter limit


def event_rows(facts: dict[str, Any], node: str, started_at: str, unmask: bool) -> list[dict]:
    """One row per kernel-log event in the facts, with the GPU at its bus (index, serial)."""
    log = facts.get("kernel_log")
    if not isinstance(log, dict):
        return []
    boards = _boards(facts, unmask)
    found = []
    for key, source in SOURCES:
        for event in log.get(key) or []:
            if isinstance(event, dict):
                row = _row(event, source, node, started_at, log.get("uptime_s"))
                found.append({**row, **boards.get(_tail(row["bus_id"]), NO_BOARD)})
    return found


NO_BOARD = {"gpu": None, "serial": None, "serial_key": None}


def _row(event: dict, source: str | None, node: str, started_at: str, uptime: Any) -> dict:
    kind = event.get("kind") if isinstance(event.get("kind"), str) else None
    if source == UNEXPLAINED:
        kind = _driver_and_level(event)
    source = source or (SXID if kind == SXID else "nvrm")
    t_s = event.get("t_s") if isinstance(event.get("t_s"), int | float) else None
    text = event.get("text") if isinstance(event.get("text"), str) else None
    code = event.get("code") if isinstance(event.get("code"), int) else None
    # Without the kernel's timestamp two reads of a line cannot be told apart from two lines:
    # such an event is the run's own.
    stamp = f"{t_s!r}" if t_s is not None else f"run {started_at}"
    line = "\n".join((node, source, stamp, text or ""))
    return {
        "node": node,
        "source": source,
        "kind": None if kind in (None, SXID) else kind,
        "code": code,
        "bus_id": event.get("bus_id") if isinstance(event.get("bus_id"), str) else None,
        "t_s": t_s,
        "at": wall_time(started_at, uptime, t_s),
        "line_key": hashlib.sha256(line.encode()).hexdigest(),
        "text": text,
    }


def _driver_and_level(event: dict) -> str | None:
    """'NVRM warn', 'amdgpu err', 'NVRM unknown': who logged the line, at what level."""
    words = [event.get(k) for k in ("driver", "level") if isinstance(event.get(k), str)]
    shown = " ".join(w.split(" ", 1)[0] for w in words if w)
    return shown[:40] or None


def wall_time(started_at: str, uptime: Any, t_s: float | None) -> str | None:
    """The line's UTC time: the run's start less the time since the line (the kernel's uptime,
    read with the log at the run's start, less the line's stamp); None when either is unknown."""
    if t_s is None or not isinstance(uptime, int | float) or uptime < t_s:
        return None
    try:
        start = dt.datetime.strptime(started_at, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return None
    return (start - dt.timedelta(seconds=uptime - t_s)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _boards(facts: dict[str, Any], unmask: bool) -> dict[str, dict]:
    """Bus tail -> the GPU there, as gpus rows show it."""
    by_index = {g["idx"]: g for g in rows.gpu_rows(facts, unmask)}
    return {
        bus: {"gpu": index, "serial": board["serial"], "serial_key": board["serial_key"]}
        for bus, index in rows.pci_indexes(facts).items()
        if (board := by_index.get(index)) is not None
    }


def _tail(bus: str | None) -> str | None:
    return bus.lower().split(":", 1)[1] if bus and bus.count(":") == 2 else bus


def write_events(connection: Connection, run_key: int, found: list[dict]) -> int:
    """Store the events no earlier run of the node stored; how many were new."""
    if not found:
        return 0
    node = found[0]["node"]
    keys = list({e["line_key"] for e in found})
    stored = set()
    for start in range(0, len(keys), IN_LIST):
        query = sa.select(events.c.line_key).where(
            events.c.node == node, events.c.line_key.in_(keys[start : start + IN_LIST])
        )
        stored.update(connection.execute(query).scalars())
    new = {e["line_key"]: {**e, "run": run_key} for e in found if e["line_key"] not in stored}
    if new:
        connection.execute(events.insert(), list(new.values()))
    return len(new)


def load_events(
    engine: Engine, node: str | None = None, keys: list[str] | None = None, last: int | None = 50
) -> tuple[list[dict[str, Any]], int]:
    """The newest `last` events (None: all) of a node, of boards (serial digests) or of the
    store, oldest first, and how many there are."""
    where = sa.true()
    if node is not None:
        where = events.c.node == node
    elif keys is not None:
        where = events.c.serial_key.in_(keys)
    order = (events.c.at.desc(), events.c.id.desc())
    query = sa.select(events).where(where).order_by(*order).limit(last)
    count = sa.select(sa.func.count()).select_from(events).where(where)
    with engine.connect() as connection:
        found = [dict(row._mapping) for row in connection.execute(query)][::-1]
        return found, connection.execute(count).scalar_one()


def what(event: dict[str, Any]) -> str:
    """'Xid 79', 'SXid 12028', 'fallen_off_bus', 'amdgpu', 'unexplained NVRM warn'."""
    if event["source"] in ("xid", SXID) and event["code"] is not None:
        return f"{'Xid' if event['source'] == 'xid' else 'SXid'} {event['code']}"
    if event["source"] == UNEXPLAINED:
        return f"{UNEXPLAINED} {event['kind'] or 'driver line'}"
    return event["kind"] or event["source"]


def cells(event: dict[str, Any]) -> tuple[str, ...]:
    """An event as a row of COLUMNS: its time (or its kernel stamp), node, GPU (or bus), serial,
    what it is and the line."""
    at = event["at"] or (f"boot+{event['t_s']:.0f}s" if event["t_s"] is not None else "?")
    gpu = str(event["gpu"]) if event["gpu"] is not None else event["bus_id"] or ""
    return (at, event["node"], gpu, event["serial"] or "", what(event), event["text"] or "")


def events_title(events: list[dict[str, Any]], total: int) -> str:
    """'kernel-log events: 6', or 'the last 50 of 1,204'."""
    more = f"the last {len(events)} of {total:,}" if total > len(events) else len(events)
    return f"kernel-log events: {more}"
