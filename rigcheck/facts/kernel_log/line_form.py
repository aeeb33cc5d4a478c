"""How a kernel-log line is printed: its priority (syslog level: 0 emerg .. 3 err .. 7 debug),
kept so that an error line no rule explains is still seen (unexplained.py), and its time stamp.

The readers write every message in the kernel's raw form, `<level>[seconds] message` (what
`dmesg -r` prints): /dev/kmsg's records start with the level ("3,1234,269516977,-;NVRM: ..."),
journalctl's JSON carries it as PRIORITY. A line copied from elsewhere may carry it as
`dmesg -x` prints it ("kern  :err   : [  269.51] ..."), or not at all (plain dmesg, a report):
then its level is unknown (None).
"""

from __future__ import annotations

import json
import re
from typing import Any

ERR = 3  # KERN_ERR: err, crit, alert and emerg are <= 3
NAMES = ("emerg", "alert", "crit", "err", "warn", "notice", "info", "debug")
# "<3>[ 269.516977] ..." (dmesg -r; the facility is in the high bits: kernel's is 0)
RAW = re.compile(r"^\s*<(?P<n>\d{1,3})>")
# "kern  :err   : [ 269.516977] ..." (dmesg -x; util-linux writes "warn" for warning), and
# talosctl dmesg's "192.168.11.119: kern: warning: [2026-04-22T21:30:51.52Z]: ..." (node first)
DECODED = re.compile(
    r"^\s*(?:[\w.:-]+:\s+)?(?:kern|user|daemon|syslog)\s*:\s*(?P<name>[a-z]+)\s*:\s?"
)
ALIASES = {"warning": 4, "error": 3}  # level names other writers use


# "[  269.516977] ..." (dmesg, journalctl -o short-monotonic), also after a syslog prefix
# ("Nov 12 10:00:01 gpu01 kernel: [  269.516977] ..."): seconds since boot.
MONOTONIC = re.compile(r"^(?:[^\[]*?\bkernel:\s*)?\[\s*(?P<t>\d+\.\d+)\]")


def seconds(line: str) -> float | None:
    """The line's time since boot, or None (a wall-clock stamp cannot be placed in the boot)."""
    found = MONOTONIC.match(split(line)[1].strip())
    return float(found["t"]) if found else None


def split(line: str) -> tuple[int | None, str]:
    """(level or None, the line without its level prefix)."""
    raw = RAW.match(line)
    if raw:
        return int(raw["n"]) & 7, line[raw.end() :]
    decoded = DECODED.match(line)
    if decoded and decoded["name"] in NAMES:
        return NAMES.index(decoded["name"]), line[decoded.end() :]
    if decoded and decoded["name"] in ALIASES:
        return ALIASES[decoded["name"]], line[decoded.end() :]
    return None, line


def journal_line(record: str) -> str:
    """One line of `journalctl -o json` as `<level>[seconds] message`; a line that is no JSON
    (an older journalctl's text) is kept as it is."""
    try:
        entry: dict[str, Any] = json.loads(record)
    except ValueError:
        return record
    if not isinstance(entry, dict):
        return record
    message = entry.get("MESSAGE")
    if isinstance(message, list):  # journald stores a message that is not UTF-8 as bytes
        message = bytes(b for b in message if isinstance(b, int) and 0 <= b < 256).decode(
            errors="replace"
        )
    stamp = entry.get("_SOURCE_MONOTONIC_TIMESTAMP") or entry.get("__MONOTONIC_TIMESTAMP")
    when = f"[{int(stamp) / 1e6:.6f}] " if str(stamp or "").isdigit() else ""
    level = str(entry.get("PRIORITY", ""))
    prefix = f"<{level}>" if level.isdigit() else ""
    return f"{prefix}{when}{message or ''}"
