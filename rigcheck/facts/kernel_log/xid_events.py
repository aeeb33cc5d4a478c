"""Xid events with wall-clock times: the kernel-log probe as the burn-in reads it.

The kernel log stamps events in seconds since boot; the burn-in judges what happened between
two `time.time()` moments. Boot time is now less the uptime, so an event's wall-clock time is
boot time plus its stamp. A log that cannot be read raises with the probe's reason, which
rigcheck/burnin/events.py turns into an error record (the Xid check then fails closed).
"""

from __future__ import annotations

import time
from typing import Any

from rigcheck.facts.kernel_log.reader import probe_kernel_log
from rigcheck.facts.probe import ERROR_KEY, CommandRunner, is_error


class KernelLogUnreadable(RuntimeError):
    """No reader of the kernel log worked; the message says why and how to allow one."""


def xid_events(since: float, run: CommandRunner | None = None) -> list[dict[str, Any]]:
    """Xid events logged at or after `since` (time.time() seconds): time, code, bus_id, text."""
    return _logged_since("xid_events", since, run)


def nvrm_events(since: float, run: CommandRunner | None = None) -> list[dict[str, Any]]:
    """NVRM fault records (rigcheck.facts.kernel_log.nvrm) logged at or after `since`: time, kind,
    bus_id, text. Read from the same kernel log as the Xid events."""
    return _logged_since("nvrm_events", since, run)


def _logged_since(key: str, since: float, run: CommandRunner | None) -> list[dict[str, Any]]:
    """The probe's `key` events with a wall-clock "time", those at or after `since`."""
    log = probe_kernel_log(run or CommandRunner())
    if is_error(log):
        raise KernelLogUnreadable(log[ERROR_KEY])
    uptime = log.get("uptime_s")
    if not isinstance(uptime, (int, float)):
        raise KernelLogUnreadable("/proc/uptime is unreadable: cannot place the events in time")
    booted = time.time() - uptime
    events = []
    for event in log[key]:
        if event["t_s"] is None:  # a log line without a stamp cannot be placed in the window
            continue
        at = booted + event["t_s"]
        if at >= since:
            events.append({**event, "time": at})
    return events
