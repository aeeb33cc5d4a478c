"""Xid events from the kernel log: journalctl, /dev/kmsg or dmesg, within a window since boot.
amdgpu's fault lines (amdgpu.py), the NVIDIA driver's records that carry no Xid
(nvrm.py: a GPU fallen off the bus, RmInitAdapter failed) and the ConnectX NIC driver's
(mlx5.py: firmware health, recovery, command timeouts) are read from the same lines, in the
same window.

The NVIDIA driver logs every GPU fault as `NVRM: Xid (PCI:0000:3b:00): 79, pid=..., <text>`.
The probe keeps each event's time (seconds since boot), PCI bus id, code and text; what a code
means is the checks' business (xid_catalog.py), so an old snapshot is judged by today's table.

Readers are tried in order: `journalctl -k -b -o json` (the whole boot, even when the ring
buffer has wrapped), /dev/kmsg, `dmesg -r`; each keeps every message's priority
(line_form.py), so that driver error lines no rule reads are still reported (unexplained.py).
Without root they may all be refused (kernel.dmesg_restrict=1, a user outside the
systemd-journal group, a container without the journal): the fact is then an error record
naming each refusal, never an empty list that would read as "no Xids".
"""

from __future__ import annotations

import errno
import os
import platform
import re
from pathlib import Path
from typing import Any

from rigcheck.facts.kernel_log import line_form
from rigcheck.facts.kernel_log.amdgpu import parse_amdgpu_lines
from rigcheck.facts.kernel_log.mlx5 import parse_mlx5_lines
from rigcheck.facts.kernel_log.nvrm import parse_nvrm
from rigcheck.facts.kernel_log.unexplained import unexplained_errors
from rigcheck.facts.probe import CommandRunner, error_record

WINDOW_ENV = "RIGCHECK_XID_WINDOW"  # e.g. "2h", "30m", "900s"; unset or "boot": since boot
MAX_EVENTS = 200  # newest kept; a GPU in an Xid storm logs thousands
# `NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.`
# Older drivers omit "PCI:"; the function digit is never printed. On a MIG GPU the driver adds
# the instance the fault is attributed to: `(PCI:0000:01:00 GPU-I:05 GPU-CI:00)` (kernel_rc.c).
# A reporter may have redacted the address (`PCI:...`): the event is kept, with no GPU named.
XID_LINE = re.compile(
    r"NVRM: Xid \((?:PCI:)?(?P<bus>[^)\s]*?)(?P<mig>(?:\s+GPU-C?I:\s*\d+)*)\s*\):"
    r"\s*(?P<code>\d+)(?:,\s*|\s*$)(?P<text>.*)"
)
BUS = re.compile(
    r"(?:(?P<domain>[0-9a-fA-F]{4,8}):)?(?P<bus>[0-9a-fA-F]{2}:[0-9a-fA-F]{2})(?:\.\d)?"
)
MIG = re.compile(r"GPU-(?P<which>C?I):\s*(?P<n>\d+)")
PID = re.compile(r"pid=(?P<pid>\d+)")
MONOTONIC = line_form.MONOTONIC  # "[  269.516977] ...": seconds since boot
JOURNAL_REFUSED = ("not seeing messages", "No journal files", "insufficient permissions")
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
HOW_TO_READ = (
    "run as root, add the user to the systemd-journal (or adm) group, or allow dmesg with "
    "`sysctl kernel.dmesg_restrict=0`"
)


def parse_window(text: str | None) -> int | None:
    """'2h' -> 7200 seconds; None, '' or 'boot' -> None (since boot). Raises ValueError."""
    if text is None or text.strip().lower() in ("", "boot"):
        return None
    match = re.fullmatch(r"(\d+)\s*([smhd]?)", text.strip().lower(), re.ASCII)  # not '２h'
    if not match or int(match.group(1)) <= 0:
        raise ValueError(
            f"Xid window {text!r} is not a duration: write e.g. 2h, 30m, 900s or 'boot'"
        )
    return int(match.group(1)) * UNITS[match.group(2) or "s"]


def xid_window_arg(text: str) -> int | None:
    """parse_window for argparse: a bad value is one line saying what to write instead."""
    import argparse

    try:
        return parse_window(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def probe_kernel_log(run: CommandRunner, window_s: int | None = None) -> dict[str, Any]:
    """Xid events since boot (or in the last window_s seconds), or why none could be read."""
    if platform.system() != "Linux":
        return error_record(f"no Linux kernel log on {platform.system()}: Xid is NVIDIA-on-Linux")
    refusals = []
    for name, reader in (
        ("journalctl -k -b", lambda: _journal(run)),
        ("/dev/kmsg", _kmsg),
        ("dmesg", lambda: _dmesg(run)),
    ):
        try:
            lines = reader()
        except Exception as exc:  # each reader's failure is one reason in the record
            refusals.append(f"{name}: {type(exc).__name__}: {exc}".strip())
            continue
        return _events(name, lines, window_s)
    return error_record(f"no kernel log readable ({'; '.join(refusals)}): {HOW_TO_READ}")


def _journal(run: CommandRunner) -> list[str]:
    """JSON, for each message's PRIORITY (line_form.journal_line writes `<level>[t] message`)."""
    result = run(["journalctl", "-k", "-b", "-o", "json", "--no-pager", "-q"])
    refused = next((r for r in JOURNAL_REFUSED if r in result.stderr), None)
    if result.returncode != 0 or refused:
        raise PermissionError((result.stderr.strip() or f"exit {result.returncode}")[:200])
    lines = [line_form.journal_line(r) for r in result.stdout.splitlines() if r.strip()]
    return _nonempty(lines, "journalctl")


def _dmesg(run: CommandRunner) -> list[str]:
    """`dmesg -r`: each line keeps its level (`<3>[  269.516977] NVRM: ...`)."""
    result = run(["dmesg", "-r"])
    if result.returncode != 0:
        raise PermissionError((result.stderr.strip() or f"exit {result.returncode}")[:200])
    return _nonempty(result.stdout.splitlines(), "dmesg")


def _kmsg(path: str = "/dev/kmsg") -> list[str]:
    """Every record in the ring buffer, as dmesg writes it: "[seconds] message"."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    lines = []
    try:
        while True:
            try:
                record = os.read(fd, 8192)
            except BlockingIOError:
                break  # read everything there is
            except OSError as exc:
                if exc.errno == errno.EPIPE:
                    continue  # the record was overwritten while reading: skip it
                raise
            if not record:
                break
            lines.append(_kmsg_line(record.decode(errors="replace")))
    finally:
        os.close(fd)
    return _nonempty(lines, "/dev/kmsg")


def _kmsg_line(record: str) -> str:
    """'3,1234,269516977,-;NVRM: ...' (level, sequence, microseconds since boot) ->
    '<3>[269.516977] NVRM: ...'."""
    header, _, message = record.partition(";")
    fields = header.split(",")
    micros = int(fields[2]) if len(fields) > 2 and fields[2].isdigit() else 0
    level = f"<{int(fields[0]) & 7}>" if fields[0].isdigit() else ""
    return f"{level}[{micros / 1e6:.6f}] {message.splitlines()[0] if message else ''}"


def _nonempty(lines: list[str], name: str) -> list[str]:
    """A booted kernel always has logged something: nothing at all means we saw nothing."""
    if not any(line.strip() for line in lines):
        raise PermissionError(f"{name} returned no lines (no access to the kernel log?)")
    return lines


def _uptime() -> float | None:
    try:
        return float(Path("/proc/uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _events(source: str, raw: list[str], window_s: int | None) -> dict[str, Any]:
    uptime = _uptime()
    since = None if window_s is None or uptime is None else max(0.0, uptime - window_s)
    levels, lines = levels_and_lines(raw)
    parsed = [parse_xid(line) for line in lines]
    events = _within(parsed, since)
    amdgpu = _within(parse_amdgpu_lines(lines), since)  # amdgpu.py
    nvrm = _within(parse_nvrm(lines), since)  # nvrm.py, with nvswitch.py's SXids
    mlx5 = _within(parse_mlx5_lines(lines), since)  # mlx5.py: ConnectX NICs
    xids = {i for i, event in enumerate(parsed) if event is not None}
    unexplained = _within(unexplained_errors(levels, lines, xids), since)
    return {
        "source": source,
        "window_s": window_s,
        "uptime_s": uptime,
        "lines_read": len(lines),
        "xid_count": len(events),
        "xid_events": events[-MAX_EVENTS:],
        "amdgpu_count": len(amdgpu),
        "amdgpu_events": amdgpu[-MAX_EVENTS:],
        "nvrm_count": len(nvrm),
        "nvrm_events": nvrm[-MAX_EVENTS:],
        "mlx5_count": len(mlx5),
        "mlx5_events": mlx5[-MAX_EVENTS:],
        "levels_read": sum(level is not None for level in levels),
        "unexplained_count": len(unexplained),
        "unexplained_events": unexplained[-MAX_EVENTS:],
    }


def levels_and_lines(raw: list[str]) -> tuple[list[int | None], list[str]]:
    """Each line's level (None: the reader gave none) and the line without it, as rules read it."""
    split = [line_form.split(line) for line in raw]
    return [level for level, _ in split], [line for _, line in split]


def _within(events: list[dict[str, Any] | None], since: float | None) -> list[dict[str, Any]]:
    """The parsed events (None: not an event line) stamped at or after `since`."""
    found = [e for e in events if e is not None]
    if since is None:
        return found
    return [e for e in found if e["t_s"] is None or e["t_s"] >= since]


def parse_xid(line: str) -> dict[str, Any] | None:
    """One Xid event from a log line, or None when the line is not one."""
    match = XID_LINE.search(line)
    if match is None:
        return None
    pid = PID.search(match["text"])
    event = {
        "t_s": line_form.seconds(line),
        "bus_id": _bus_id(match["bus"]),
        "code": int(match["code"]),
        "pid": int(pid["pid"]) if pid else None,
        "text": match["text"].strip()[:300],
    }
    mig = {m["which"]: int(m["n"]) for m in MIG.finditer(match["mig"])}
    if mig:  # the MIG instance the driver attributes the fault to
        event["mig"] = {"gpu_instance": mig.get("I"), "compute_instance": mig.get("CI")}
    return event


def _bus_id(bus: str) -> str | None:
    """The driver's '0000:3b:00' as sysfs writes the GPU's function: '0000:3b:00.0'; None for
    an address a reporter redacted ('...')."""
    found = BUS.fullmatch(bus)
    if found is None:
        return None
    domain = (found["domain"] or "0000").lower()
    return f"{domain[-4:]}:{found['bus'].lower()}.0"


def window_from_env(probe: Any, window_s: int | None) -> dict[str, Any]:
    """Run the probe with this window, else RIGCHECK_XID_WINDOW's; a bad value is the record."""
    if window_s is None:
        try:
            window_s = parse_window(os.environ.get(WINDOW_ENV))
        except ValueError as exc:
            return error_record(f"{WINDOW_ENV}: {exc}")
    return probe(window_s)
