"""The suspect GPU's past: has its board (by serial, else UUID) failed a check in an earlier run
kept in rigcheck's history store (rigcheck.history)? One query; said as evidence, never a cause
on its own. A store that is off says nothing; one that is missing or unreadable is said."""

from __future__ import annotations

from typing import Any


def board_history(chosen_url: str | None, facts: dict[str, Any], gpu: str | None) -> str:
    from rigcheck.history.location import missing_store_file, shown_url, store_url

    url = store_url(chosen_url)
    if url is None or gpu is None:
        return ""
    missing = missing_store_file(url)
    if missing:
        return f"history: no store at {missing}"
    try:
        return _sightings(url, facts, gpu)
    except Exception as exc:  # a broken store costs the clause, never the answer
        reason = " ".join(str(exc).split())[:120] or type(exc).__name__
        return f"history not read: {shown_url(url)}: {reason}"


def _sightings(url: str, facts: dict[str, Any], gpu: str) -> str:
    from rigcheck.history import rows, store
    from rigcheck.history.run_hook import board_line

    index = next(
        (
            d.get("index")
            for d in _devices(facts)
            if gpu in (str(d.get("index")), str(d.get("uuid")))
        ),
        None,
    )
    board = next((row for row in rows.gpu_rows(facts, unmask=True) if row["idx"] == index), None)
    if board is None or not (board["serial_key"] or board["uuid_key"]):
        return f"history: GPU {gpu} has no serial or UUID to look up"
    engine = store.open_store(url)
    try:
        seen = store.failing_sightings(engine, [board["serial_key"], board["uuid_key"]])
    finally:
        engine.dispose()
    sightings = seen.get(board["serial_key"]) or seen.get(board["uuid_key"])
    if not sightings:
        return f"history: GPU {board['idx']}'s board never seen failing"
    return f"history: {board_line(board, sightings)}"


def _devices(facts: dict[str, Any]) -> list[dict[str, Any]]:
    devices = facts.get("devices")
    return [d for d in devices if isinstance(d, dict)] if isinstance(devices, list) else []
