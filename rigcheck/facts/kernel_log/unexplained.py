"""Error lines from a GPU, switch or NIC driver that no rule explains: the kernel log's unknown.

The rules (Xid, NVRM records, SXid, amdgpu) will always trail the drivers. So every line a
GPU/switch/NIC driver logged at priority err or worse (line_form.py keeps it) that no rule
reads becomes an event of its own, quoting the line and the device it names: the check warns,
the acceptance tier fails. A line whose level the reader could not give (a plain `dmesg`, a
copied report) counts when the driver marked it an error itself (DRM's "*ERROR*").

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

from rigcheck.facts.kernel_log import amdgpu, line_form, nvrm, sxid

BENIGN_FILE = Path(__file__).with_name("benign_errors.json")
# What precedes the message: a dmesg -T / monotonic stamp, a syslog or journal prefix.
PREFIX = (
    r"^\s*(?:\[[^\]]*\]\s*)?(?:\w{3}\s+\d+\s+[\d:]+\s+)?(?:\S+\s+kernel:\s*)?"
    r"(?:\[\s*\d+\.\d+\]\s*)?"
)
DRIVER = re.compile(
    PREFIX + r"(?P<driver>NVRM|nvidia(?:-[a-z]+\d*|_[a-z]+)?|amdgpu|mlx5_core|mlx5_ib|mlx4_core|"
    r"mlx4_en|bnxt_en|bnxt_re|irdma|ice|efa|gdrdrv|nv_peer_mem|infiniband mlx5_\d+|"
    r"\[drm:[^\]\s]+ \[amdgpu\]\])(?=[:\s])"
)
DRM_ERROR = re.compile(r"\*ERROR\*")
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
    explained = _explained(lines, xids)
    found = []
    for i, (level, line) in enumerate(zip(levels, lines, strict=True)):
        driver = DRIVER.match(line)
        if driver is None or i in explained or not _is_error(level, line):
            continue
        if any(p.search(line) for p in benign()):
            continue
        found.append(_event(level, line, driver))
    return found


def _is_error(level: int | None, line: str) -> bool:
    if level is not None:
        return level <= line_form.ERR
    return DRM_ERROR.search(line) is not None


def _explained(lines: list[str], xids: set[int] | None) -> set[int]:
    """The lines a rule reads: Xids, NVRM records (all their lines), SXids and their details,
    amdgpu fault lines."""
    if xids is None:
        xids = {i for i, line in enumerate(lines) if nvrm.XID.search(line)}
    explained = {i for first, last, _ in nvrm.records(lines) for i in range(first, last + 1)}
    for i, line in enumerate(lines):
        if i in xids or sxid.is_detail(line) or amdgpu.explains(line):
            explained.add(i)
    return explained


def _event(level: int | None, line: str, driver: re.Match) -> dict[str, Any]:
    bus = BDF.search(line)
    return {
        "t_s": line_form.seconds(line),
        "bus_id": f"{bus['bus'].lower()}{bus['fn'] or '.0'}" if bus else None,
        "driver": re.sub(r"^\[drm:.*", "amdgpu", driver["driver"]),
        "level": line_form.NAMES[level] if level is not None else "err (*ERROR*)",
        "text": line[driver.start("driver") :].strip()[:300],
    }
