"""Xid events during the burn-in, read through the kernel-log probe
(rigcheck/facts/kernel_log/xid_events.py: journalctl, /dev/kmsg or dmesg).

`read_xid_events(start, end)` returns the Xid events logged between two wall-clock times as
[{"t_s": seconds after start, "code": 79, "device": "0000:5d:00.0", "text": ...}], or an error
record {"error": why} when the log cannot be read (no root, no journal access), so
test_no_xid_events fails closed on GPU classes rather than passing unread. Tests replace READER.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _facts_reader() -> Callable[[float], list[dict[str, Any]]]:
    from rigcheck.facts.kernel_log.xid_events import xid_events

    return xid_events


READER: Callable[[], Callable[[float], list[dict[str, Any]]]] = _facts_reader


LATE_S = 5  # the kernel logs a few seconds late


def read_xid_events(start: float, end: float) -> list[dict[str, Any]] | dict[str, str]:
    """Xid events between two time.time() moments, relative to start; or an error record."""
    return between(lambda since: READER()(since), start, end, "Xid events", "code", int)


def between(
    read: Callable[[float], list[dict[str, Any]]],
    start: float,
    end: float,
    what: str,
    key: str,
    kind: Callable[[Any], Any],
) -> list[dict[str, Any]] | dict[str, str]:
    """The kernel-log records READ gives from START on that fall in the window, each with its
    time after START, its KEY (Xid code, NVRM kind), GPU and text; or an error record."""
    try:
        events = read(start)
    except Exception as exc:  # a probe that fails is a reason, never a crash of the burn-in
        return {"error": f"reading {what} failed: {type(exc).__name__}: {exc}"}
    return [
        {
            "t_s": round(float(e["time"]) - start, 1),
            key: kind(e[key]),
            "device": e.get("bus_id"),
            "text": str(e.get("text", "")),
        }
        for e in events
        if start <= float(e["time"]) <= end + LATE_S
    ]
