"""NVIDIA driver records that carry no Xid: a GPU lost from the bus at load time, a GPU the
driver could not initialize, GSP firmware that did not start. Each is a machine fault.

They are read from the same kernel-log lines as the Xid events (reader.py). Some span
lines: the open driver (570 and later) prints

    NVRM: The NVIDIA GPU 0000:b3:00.0
          NVRM: (PCI ID: 10de:26b5) installed in this system has
          NVRM: fallen off the bus and is not responding to commands.

(NVIDIA/NVSentinel#155, leptonai/gpud#1209), so a record is read from its first line and the
few after it. A record that names no GPU ("NVRM: RmInitAdapter failed! (0x26:0xffff:1375)" of
older drivers) takes the GPU named by an NVRM line right beside it, or none: the check then
fails the node naming the line, never passes it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

BDF = r"(?P<bus>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d)"
MONOTONIC = re.compile(r"^\[\s*(?P<t>\d+\.\d+)\]")
NEAR = 3  # lines: a multi-line record's continuation, or the GPU line beside a bus-less record
# "NVRM: GPU 0000:98:00.0: ..." or "NVRM: The NVIDIA GPU 0000:b3:00.0" or "GPU at PCI:0000:61:00"
NAMED_GPU = re.compile(
    r"NVRM: (?:The NVIDIA )?GPU (?:at PCI:)?"
    r"(?P<bus>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.\d)?)"
)
RESET = "reset the GPU (`nvidia-smi -r -i <index>`) or reboot the node"
RMA = "if it recurs, ask the provider to replace the GPU (RMA)"


@dataclass(frozen=True)
class NvrmFault:
    kind: str
    start: re.Pattern  # the record's first line
    then: re.Pattern | None  # a later line of the same record, if it spans lines
    meaning: str
    cause: str  # as xid_catalog.Xid.cause
    action: str


CATALOGUE = (
    NvrmFault(
        "fallen_off_bus",
        re.compile(rf"NVRM: The NVIDIA GPU {BDF}"),
        re.compile(r"fallen off the bus"),
        "the GPU fell off the PCIe bus (as Xid 79) and does not answer",
        "machine",
        "drain the node and reboot it; check power, riser/cable seating and cooling; " + RMA,
    ),
    NvrmFault(
        "fallen_off_bus",
        re.compile(rf"NVRM: GPU {BDF}: GPU has fallen off the bus"),
        None,
        "the GPU fell off the PCIe bus (as Xid 79) and does not answer",
        "machine",
        "drain the node and reboot it; check power, riser/cable seating and cooling; " + RMA,
    ),
    NvrmFault(
        "init_failed",
        re.compile(rf"NVRM: (?:GPU {BDF}: )?RmInitAdapter failed!"),
        None,
        "the driver could not initialize the GPU (RmInitAdapter failed): it is unusable",
        "machine",
        "reboot the node; if it persists, check that the driver supports this GPU "
        "(`nvidia-bug-report.sh`), then " + RMA.replace("if it recurs, ", ""),
    ),
    NvrmFault(
        "gsp_init_failed",
        re.compile(r"NVRM: RmInitAdapter: Cannot initialize GSP firmware RM"),
        None,
        "the GPU System Processor firmware did not start, so the GPU is unusable",
        "machine",
        f"{RESET}; if it persists, update the driver or ask the provider",
    ),
    NvrmFault(
        "gfw_boot_failed",
        re.compile(r"NVRM: \w+: failed to wait for GFW[_ ]boot", re.I),
        None,
        "the board's firmware (GFW boot) did not finish, so the driver cannot use the GPU",
        "machine",
        f"power-cycle the node; {RMA}",
    ),
)


def find(kind: str) -> NvrmFault:
    """The catalogue entry of an event's kind (the first of that kind: they share meaning); a
    kind today's table no longer has (an old snapshot) is judged a machine fault, never dropped."""
    known = next((f for f in CATALOGUE if f.kind == kind), None)
    if known is not None:
        return known
    what = f"an NVRM record of kind {kind!r}"
    action = "read the record in the kernel log and ask the provider"
    return NvrmFault(kind, re.compile(re.escape(kind)), None, what, "machine", action)


def parse_nvrm(lines: list[str]) -> list[dict[str, Any]]:
    """Every NVRM fault record in the lines: time, GPU (or None), kind, text."""
    events = []
    for i, line in enumerate(lines):
        for fault in CATALOGUE:
            match = fault.start.search(line)
            end = _record_end(fault, lines, i) if match else None
            if end is None:
                continue
            events.append(_event(fault, match, lines, i, end))
            break
    return events


def _record_end(fault: NvrmFault, lines: list[str], i: int) -> int | None:
    """The record's last line; a multi-line one counts only when its later line follows within
    NEAR lines (None: it does not, so it is not this record)."""
    if fault.then is None:
        return i
    return next(
        (j for j in range(i, min(i + NEAR + 1, len(lines))) if fault.then.search(lines[j])), None
    )


def _event(fault: NvrmFault, match: re.Match, lines: list[str], i: int, end: int) -> dict[str, Any]:
    bus = match.groupdict().get("bus") or _gpu_beside(lines, i)
    when = MONOTONIC.match(lines[i].strip())
    return {
        "t_s": float(when["t"]) if when else None,
        "bus_id": bus.lower() if bus else None,
        "kind": fault.kind,
        "text": " ".join(_message(x) for x in lines[i : end + 1])[:300],
    }


def _gpu_beside(lines: list[str], i: int) -> str | None:
    """The one GPU NVRM lines within NEAR lines of a bus-less record name; None if none or two."""
    named = set()
    for line in lines[max(0, i - NEAR) : i + NEAR + 1]:
        match = NAMED_GPU.search(line)
        if match:
            named.add(_function(match["bus"]))
    return named.pop() if len(named) == 1 else None


def _function(bus: str) -> str:
    """'0000:61:00' (the driver's short form) -> '0000:61:00.0'; a full address is kept."""
    return bus if "." in bus else f"{bus}.0"


def _message(line: str) -> str:
    """A continuation line without its time stamp: "[ 12.3] NVRM: x" -> "NVRM: x"."""
    return MONOTONIC.sub("", line.strip()).strip()
