"""Error lines from a GPU, switch or NIC driver that no rule explains: the kernel log's unknown.

The rules (Xid, NVRM records, SXid, amdgpu) will always trail the drivers. So every line a
GPU/switch/NIC driver logged at priority err or worse (line_form.py keeps it) that no rule
reads becomes an event of its own, quoting the line and the device it names: the check warns,
the acceptance tier fails. A line whose level the reader could not give (a plain `dmesg`, a
copied report) counts when the driver marked it an error itself (DRM's "*ERROR*",
nvidia-peermem's "<function>:<line> ERROR").

The NVIDIA driver's own messages need their text read: RM prints them, its Xid reports
included, through out_string/nv_printf with no level of their own (open-gpu-kernel-modules
kernel-open/nvidia/os-interface.c), so the kernel logs them at its default, warning (talosctl
shows even an Xid 154 at warning, #446). An NVRM line at err, or at warning or of unknown level
whose text says error, failure, timeout, fault, halt, hang, cannot or mismatch (NVRM_ERROR),
counts -- unless it lies within ACCOMPANY lines of an Xid or NVRM record that fails the node,
whose dump it is (the RPC history after an Xid 119, "rm_init_adapter failed" after
"RmInitAdapter failed!"): that event is already reported. An application's Xid (13, 31, 43)
explains nothing around it, so a fault logged beside one is still seen.

Lines known to be logged at err on healthy machines are listed in benign_errors.json (data,
each with the public report it was seen in), as are the lines that only accompany a record a
rule already reads (the GSP's RPC history after an Xid 119): neither is an event.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from rigcheck.facts.kernel_log import amdgpu, line_form, mlx5, nvrm, sxid, xid_catalog

BENIGN_FILE = Path(__file__).with_name("benign_errors.json")
# What precedes the message: a dmesg -T / monotonic stamp (talosctl's "[<ISO time>]:"), a
# syslog or journal prefix, which may carry no host ("Feb  2 08:03:20 kernel: [37937.78] ..."),
# or an ISO time (`dmesg --time-format iso`, `journalctl -o short-iso`: "2025-01-25T10:34:54,
# 859532+00:00 nvidia-nvswitch1: ..."), and the printk caller a CONFIG_PRINTK_CALLER kernel adds
# ("[  185.590216][    C3] NVRM: ...").
PREFIX = (
    r"^\s*(?:\[[^\]]*\]:?\s*)?"
    r"(?:\w{3}\s+\d+\s+[\d:]+\s+|\d{4}-\d\d-\d\d[T ][\d:.,]+(?:Z|[+-]\d\d:?\d\d)?\s+)?"
    r"(?:(?:\S+\s+)?kernel:\s*)?(?:\[\s*\d+\.\d+\]\s*)?(?:\[\s*[CT]\d+\]\s*)?"
)
DRIVER = re.compile(
    PREFIX + r"(?P<driver>NVRM|nvidia(?:-[a-z]+\d*|_[a-z]+)?|amdgpu|mlx5_core|mlx5_ib|mlx4_core|"
    r"mlx4_en|bnxt_en|bnxt_re|irdma|ice|efa|gdrdrv|nv_peer_mem|infiniband mlx5_\d+|"
    r"\[drm:[^\]\s]+ \[amdgpu\]\])(?=[:\s])"
)
# DRM's "*ERROR*"; nvidia-peermem's peer_err() prints "nvidia-peermem <function>:<line> ERROR ".
DRM_ERROR = re.compile(r"\*ERROR\*|^\s*nvidia-peermem \S+:\d+ ERROR\b")
NVRM_ERROR = re.compile(
    r"\b(?:errors?|fail(?:ed|ure|s|ing)?|timed ?out|time ?out|timeouts?|faults?|faulted|"
    r"halt(?:ed)?|hangs?|hung|not responding|unrecoverable|uncorrectable|corrupt(?:ed|ion)?|"
    r"cannot|unable|mismatch)\b",
    re.I,
)
WARN = 4  # KERN_WARNING: the level the kernel gives a message printed with none (NVRM's)
XID_CODE = re.compile(r"NVRM: Xid \([^)]*\):\s*(\d+),?\s*(.*)")
ACCOMPANY = 12  # lines: an Xid's or NVRM record's dump (RPC history, init aftermath) around it
BDF = re.compile(r"\b(?P<bus>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})(?P<fn>\.\d)?\b")


@cache
def benign() -> tuple[re.Pattern, ...]:
    """The patterns of benign_errors.json: err-level lines that are no fault."""
    entries = json.loads(BENIGN_FILE.read_text())["lines"]
    return tuple(re.compile(e["pattern"]) for e in entries)


def unexplained_errors(
    levels: list[int | None], lines: list[str], xids: set[int] | None = None
) -> list[dict[str, Any]]:
    """Every err-or-worse driver line that no rule and no benign entry explains. `xids`: the
    lines the Xid reader parsed (reader.py passes them); without it, every "NVRM: Xid (" line."""
    if xids is None:
        xids = {i for i, line in enumerate(lines) if nvrm.XID.search(line)}
    records = nvrm.records(lines)
    explained = _explained(lines, xids, records)
    dumps = _dumps(_failing(lines, xids, records), len(lines))
    found = []
    for i, (level, line) in enumerate(zip(levels, lines, strict=True)):
        driver = DRIVER.match(line)
        if driver is None or i in explained:
            continue
        if driver["driver"] == "NVRM":
            if not _is_nvrm_error(level, line[driver.end() :], i in dumps):
                continue
        elif not _is_error(level, line[driver.start("driver") :]):
            continue
        if any(p.search(line) for p in benign()):
            continue
        found.append(_event(level, line, driver))
    return found


def _is_error(level: int | None, text: str) -> bool:
    """`text`: the line from its driver's name on."""
    if level is not None:
        return level <= line_form.ERR
    return DRM_ERROR.search(text) is not None


def _is_nvrm_error(level: int | None, message: str, in_dump: bool) -> bool:
    """An NVRM message at err or worse; or, outside an event's dump, one at the default
    (warning) level or of unknown level whose text says it is an error (the driver gives most
    of its errors no level of their own)."""
    if level is not None and level <= line_form.ERR:
        return True
    quiet = level is None or level <= WARN
    return quiet and not in_dump and NVRM_ERROR.search(message) is not None


def _failing(lines: list[str], xids: set[int], records: list) -> set[int]:
    """The first lines of the events that fail a node (an application's Xid 13 or 31 does not):
    only their dumps are explained, so a fault logged beside an application error is still seen."""
    starts = {
        first
        for first, _, event in records
        if _fails(nvrm.judge_event(event["kind"], event["text"]).cause)
    }
    for i in xids:
        found = XID_CODE.search(lines[i])
        if found is None or _fails(xid_catalog.judge(int(found[1]), found[2]).cause):
            starts.add(i)
    return starts


def _fails(cause: str) -> bool:
    return cause not in xid_catalog.NOT_FAILED


def _dumps(starts: set[int], count: int) -> set[int]:
    """The lines within ACCOMPANY of an event's first line (an Xid or NVRM record): its dump."""
    return {j for i in starts for j in range(max(0, i - ACCOMPANY), min(count, i + ACCOMPANY + 1))}


def _explained(lines: list[str], xids: set[int], records: list) -> set[int]:
    """The lines a rule reads: Xids, NVRM records (all their lines), SXids and their details,
    amdgpu fault lines, mlx5_core records and their health dumps."""
    explained = {i for first, last, _ in records for i in range(first, last + 1)}
    for i, line in enumerate(lines):
        if i in xids or sxid.is_detail(line) or amdgpu.explains(line) or mlx5.explains(line):
            explained.add(i)
    return explained


def _event(level: int | None, line: str, driver: re.Match) -> dict[str, Any]:
    bus = BDF.search(line)
    return {
        "t_s": line_form.seconds(line),
        "bus_id": f"{bus['bus'].lower()}{bus['fn'] or '.0'}" if bus else None,
        "driver": re.sub(r"^\[drm:.*", "amdgpu", driver["driver"]),
        "level": line_form.NAMES[level] if level is not None else _unleveled(driver["driver"]),
        "text": line[driver.start("driver") :].strip()[:300],
    }


def _unleveled(driver: str) -> str:
    """What made a line of unknown level count: its driver's error mark, or NVRM's text."""
    return "unknown (error text)" if driver == "NVRM" else "err (*ERROR*)"
