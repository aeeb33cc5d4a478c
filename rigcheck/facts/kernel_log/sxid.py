"""NVSwitch SXid events: the nvidia-nvswitch driver's counterpart of the GPU's Xid, and what
each means for the node.

The driver prints (src/common/nvswitch/kernel/inc/error_nvswitch.h, NVSWITCH_PRINT_SXID)

    nvidia-nvswitch1: SXid (PCI:0000:86:00.0): 20034, Fatal, Link 48 LTSSM Fault Up
    nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress non-posted PRIV
        error (First)

and, for some errors, further lines of the same event ("..., Data {0x...}", "..., Severity 1
Engine instance 32 Sub-engine instance 00"), which are read as part of it, not as new events.
The event names the switch (its driver instance and PCI address) and, where the line says, the
link; a GPU is named only when the line names one: which GPU sits behind a switch port is
the fabric manager's knowledge, not the log's.

NVIDIA's Fabric Manager guide sorts the codes (sxid_table.py): a fatal or always-fatal SXid
stops the NVLink traffic through that port (the GPUs behind it see Xid 74/45): the node fails
and is drained. A non-fatal one (a single-bit ECC error corrected, a replay) is reported, not
failed, except the two whose stated impact is stalled NVLink traffic (11004, 12028) and the
heartbeat timeout that comes with a fatal one (19084). A code the table lacks is judged by
the line's own Fatal/Non-fatal word, and a line with neither fails closed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from rigcheck.facts.kernel_log.sxid_table import ALWAYS_FATAL, FATAL, NONFATAL, TABLE

GUIDE = "https://docs.nvidia.com/datacenter/tesla/pdf/fabric-manager-user-guide.pdf"
SXID_LINE = re.compile(
    r"(?P<switch>nvidia-nvswitch\d*):?\s*SXid \((?:PCI:)?(?P<bus>[^)\s]*)\):\s*(?P<code>\d+)"
    r"(?:,\s*(?P<text>.*))?"
)
# A later line of the same event: "Data {...}" or "Severity 1 Engine instance 32 ..."
DETAIL = re.compile(r"^\s*(?:Data \{|Severity \d+ Engine instance)", re.I)
SEVERITY = re.compile(r"\b(Non-?fatal|Fatal)\b", re.I)
LINK = re.compile(r"\bLink (?P<link>\d+)\b")
BDF = re.compile(r"[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d")
# NVIDIA lists these non-fatal, but what it says they do stops NVLink traffic or comes with a
# fatal error: "GPU NVLink traffic will be stalled ... jobs abort with Xid 45" (11004, 12028),
# "usually accompanied by a fatal SXid error" (19084).
STALLS_TRAFFIC = frozenset({11004, 12028, 19084})
BY_CODE = {code: (name, kind) for code, name, kind in TABLE}
DRAIN = (
    "drain the node; reset the NVSwitches and GPUs (reboot the node) and, if the same SXid "
    "returns on the same switch and link, have the NVSwitch tray inspected (NVIDIA Fabric "
    "Manager guide, NVSwitch errors)"
)


@dataclass(frozen=True)
class Sxid:
    code: int
    meaning: str
    cause: str  # "machine" (fails) or "informational" (reported), as xid_catalog.Xid.cause
    action: str


def parse_sxid(line: str) -> dict[str, Any] | None:
    """The SXid event a line starts, or None (no SXid, or a detail line of an earlier one)."""
    match = SXID_LINE.search(line)
    if match is None or DETAIL.match(match["text"] or ""):
        return None
    link = LINK.search(match["text"] or "")
    bus = match["bus"].lower() if BDF.fullmatch(match["bus"]) else None
    return {
        "bus_id": bus,  # the switch's PCI function, as an NVRM record's GPU
        "switch": match["switch"],
        "code": int(match["code"]),
        "link": int(link["link"]) if link else None,
        "text": line[match.start() :].strip()[:300],
    }


def is_detail(line: str) -> bool:
    """A later line of an SXid event (its data or severity), part of the event, no new one."""
    match = SXID_LINE.search(line)
    return match is not None and DETAIL.match(match["text"] or "") is not None


def judge(text: str) -> Sxid:
    """What an SXid line means for the node, from NVIDIA's list (sxid_table.py)."""
    match = SXID_LINE.search(text)
    if match is None:
        return Sxid(-1, f"an SXid line rigcheck cannot read: {text[:120]!r}", "machine", DRAIN)
    code = int(match["code"])
    name, kind = BY_CODE.get(code, (None, None))
    word = SEVERITY.search(match["text"] or "")
    where = _where(match)
    if kind is None:
        fatal = word is None or word[1].lower() == "fatal"
        shown = f"SXid {code} (not in NVIDIA's SXid list as rigcheck holds it), {where}"
        return _fatal(code, shown) if fatal else _reported(code, shown)
    meaning = f"SXid {code} {name} ({kind} in NVIDIA's list), {where}"
    if kind in (FATAL, ALWAYS_FATAL) or code in STALLS_TRAFFIC:
        return _fatal(code, meaning)
    if kind == NONFATAL or code in (10001, 10002, 10004, 10005):
        return _reported(code, meaning)
    return _fatal(code, meaning)


def _where(match: re.Match) -> str:
    link = LINK.search(match["text"] or "")
    on_link = f", link {link['link']}" if link else ""
    return f"on NVSwitch {match['switch']} (PCI {match['bus']}{on_link})"


def _fatal(code: int, meaning: str) -> Sxid:
    return Sxid(code, meaning, "machine", f"{DRAIN} [{GUIDE}]")


def _reported(code: int, meaning: str) -> Sxid:
    action = "no action now; if it recurs on the same link, ask the provider to check it"
    return Sxid(code, meaning, "informational", action)
