"""NVIDIA driver records that carry no Xid: a GPU lost from the bus at load time (or found lost
by an RM call, NV_ERR_GPU_IS_LOST), a GPU that refuses work until reset
(NV_ERR_RESET_REQUIRED), a GPU the driver could not initialize, GSP firmware that did not
start, or stopped answering (RPC or heartbeat timeouts), a PMU that halted, NVLink links that
did not train. Each is a machine
fault, except the channel watchdog's report, judged as the Xid 8 it raises. The NVSwitch
driver's SXid events (sxid.py) are kept with them, kind "sxid", judged from NVIDIA's SXid
list: fatal ones fail, non-fatal ones are reported.

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

from rigcheck.facts.kernel_log import line_form, sxid

BDF = r"(?P<bus>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d)"
MONOTONIC = re.compile(r"^\[\s*(?P<t>\d+\.\d+)\]")
NEAR = 3  # lines: a multi-line record's continuation, or the GPU line beside a bus-less record
# "NVRM: GPU 0000:98:00.0: ..." or "NVRM: The NVIDIA GPU 0000:b3:00.0" or "GPU at PCI:0000:61:00"
NAMED_GPU = re.compile(
    r"NVRM: (?:The NVIDIA )?GPU (?:at PCI:)?"
    r"(?P<bus>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.\d)?)"
    # the second line of the invalid-BAR record: "NVRM: BAR0 is 0M @ 0x0 (PCI:0000:06:00.0)"
    r"|NVRM: BAR\d is .*\(PCI:(?P<bar_bus>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d)\)"
)
RESET = "reset the GPU (`nvidia-smi -r -i <index>`) or reboot the node"
GSP = (
    "drain the node and reset the GPU or reboot it (NVIDIA: as Xid 119/120, RESET_GPU); if it "
    "recurs, update the driver and GPU firmware, then ask the provider"
)
XID = re.compile(r"NVRM: Xid \(")  # an Xid line is the Xid reader's, never a record here
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
    # An RM call that found the GPU gone: "NVRM: nvAssertOkFailedNoLog: Assertion failed: GPU
    # lost from the bus [NV_ERR_GPU_IS_LOST] (0x0000000F) returned from rmStatus @ ..."
    # (open-gpu-kernel-modules#688, a DGX Station A100 whose GPU then stopped answering).
    NvrmFault(
        "fallen_off_bus",
        re.compile(r"NVRM: .*\[NV_ERR_GPU_IS_LOST\]"),
        None,
        "the GPU fell off the PCIe bus (as Xid 79) and does not answer",
        "machine",
        "drain the node and reboot it; check power, riser/cable seating and cooling; " + RMA,
    ),
    # "NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required [NV_ERR_RESET_REQUIRED]
    # (0x00000062) returned from status @ kernel_channel.c:2827": the GPU refuses work until it
    # is reset (kubernetes-sigs/dra-driver-nvidia-gpu#982, a GB200 GPU "busy or unavailable").
    NvrmFault(
        "reset_required",
        re.compile(r"NVRM: .*\[NV_ERR_RESET_REQUIRED\]"),
        None,
        "the driver refuses work on the GPU until it is reset (NV_ERR_RESET_REQUIRED)",
        "machine",
        f"{RESET}; find the fault logged before it; {RMA}",
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
    # "NVRM: This PCI I/O region assigned to your NVIDIA device is invalid:" / "NVRM: BAR0 is 0M
    # @ 0x0 (PCI:0000:06:00.0)" / "NVRM: The system BIOS may have misconfigured your GPU."
    # (system76/firmware-open#66, open-gpu-kernel-modules#344): the GPU got no address window.
    NvrmFault(
        "bar_invalid",
        re.compile(r"NVRM: This PCI I/O region assigned to your NVIDIA device is invalid"),
        None,
        "the GPU's PCI address window (BAR) was not assigned, so the driver cannot use the GPU",
        "machine",
        "check the BIOS (Above 4G Decoding, Resizable BAR, MMIO size) or the VM's BAR layout, "
        "then reboot; if it persists, ask the provider",
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
    # NVRM: GPU0 _kgspRpcRecvPoll: GSP RM heartbeat timed out (and _kgspIsHeartbeatTimedOut;
    # 595 drivers add "_kgspRpcRecvPoll: LibOS heartbeat timed out", open-gpu-kernel-modules#1200)
    NvrmFault(
        "gsp_heartbeat_timeout",
        re.compile(
            r"NVRM: .*(?:(?:GSP RM|LibOS) heartbeat timed out|_kgspIsHeartbeatTimedOut: Heartbeat)"
        ),
        None,
        "the GPU System Processor stopped answering (its heartbeat timed out)",
        "machine",
        GSP,
    ),
    # 525-535 drivers: "NVRM: ... Timeout waiting for RPC from GSP! Expected function 76 ..."
    # (newer drivers print the same text inside Xid 119, which the Xid reader keeps); 595
    # drivers open their RPC-timeout report with a banner, "_kgspLogRpcTimeout: ****** GSP
    # Timeout ******" (open-gpu-kernel-modules#1230)
    NvrmFault(
        "gsp_rpc_timeout",
        re.compile(
            r"NVRM: .*(?:Timeout (?:after \d+s of )?waiting for RPC (?:response )?from \w*\s?GSP"
            r"|_kgspLogRpcTimeout: \*+ GSP Timeout)"
        ),
        None,
        "a call into the GPU System Processor firmware timed out (as Xid 119)",
        "machine",
        GSP,
    ),
    # NVRM: GPU0 _kgspRpcGspEventPmuHalted: Received signal from GSP that PMU has halted.
    NvrmFault(
        "pmu_halted",
        re.compile(r"(?:_kgspRpcGspEventPmuHalted|PMU has halted|\bPMU halted\b)"),
        None,
        "the GPU's power-management microcontroller (PMU) halted (as Xid 62)",
        "machine",
        f"{RESET}; {RMA}",
    ),
    # "NVRM: krcWatchdog_IMPL: RC watchdog: GPU is probably locked!  Notify Timeout Seconds: 7",
    # printed before the Xid 8 it raises (open-gpu-kernel-modules#1159): judged as NVIDIA judges
    # Xid 8 (RESTART_APP), so a node is not failed for what a hung application can cause.
    NvrmFault(
        "rc_watchdog",
        re.compile(r"NVRM: .*RC watchdog: GPU is probably locked"),
        None,
        "the driver's channel watchdog saw the GPU stop processing (it raises Xid 8)",
        "application",
        "restart the application; if it recurs with no application fault, reset the GPU and "
        "ask the provider (NVIDIA's Xid 8: RESTART_APP, then CONTACT_SUPPORT)",
    ),
    # NVRM: knvlinkDiscoverPostRxDetLinks_GH100: Getting peer0's postRxDetLinkMask failed!
    NvrmFault(
        "nvlink_training_failed",
        re.compile(
            r"NVRM: .*(?:postRxDetLinkMask failed|[Ll]ink training failed|"
            r"[Ff]ailed to train (?:NVLink )?links?)"
        ),
        None,
        "NVLink links did not train: the GPU's NVLink bandwidth is reduced or gone",
        "machine",
        "drain the node and reboot it; `nvidia-smi nvlink -s` shows the links; if it recurs the "
        "board, its NVLink bridge or the NVSwitch tray needs service: ask the provider",
    ),
)
SXID = "sxid"  # the kind of an NVSwitch SXid event (sxid.py)


def find(kind: str) -> NvrmFault:
    """The catalogue entry of an event's kind (the first of that kind: they share meaning); a
    kind today's table no longer has (an old snapshot) is judged a machine fault, never dropped."""
    known = next((f for f in CATALOGUE if f.kind == kind), None)
    if known is not None:
        return known
    what = f"an NVRM record of kind {kind!r}"
    action = "read the record in the kernel log and ask the provider"
    return NvrmFault(kind, re.compile(re.escape(kind)), None, what, "machine", action)


def judge_event(kind: str, text: str) -> NvrmFault:
    """What one record means: an SXid by its code and line (sxid.py), any other by its kind."""
    if kind != SXID:
        return find(kind)
    judged = sxid.judge(text)
    return NvrmFault(SXID, re.compile("SXid"), None, judged.meaning, judged.cause, judged.action)


def parse_nvrm(lines: list[str]) -> list[dict[str, Any]]:
    """Every NVRM fault record and NVSwitch SXid in the lines: time, GPU (or None), kind, text
    (and an SXid's switch, code and link)."""
    return [event for _, _, event in records(lines)]


def records(lines: list[str]) -> list[tuple[int, int, dict[str, Any]]]:
    """(first line, last line, event) of every record, for telling which lines are explained."""
    found = []
    for i, line in enumerate(lines):
        switch = sxid.parse_sxid(line)
        if switch is not None:
            found.append((i, i, {"t_s": line_form.seconds(line), "kind": SXID, **switch}))
            continue
        if XID.search(line):
            continue
        for fault in CATALOGUE:
            match = fault.start.search(line)
            end = _record_end(fault, lines, i) if match else None
            if end is None:
                continue
            found.append((i, end, _event(fault, match, lines, i, end)))
            break
    return found


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
    return {
        "t_s": line_form.seconds(lines[i]),
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
            named.add(_function(match["bus"] or match["bar_bus"]))
    return named.pop() if len(named) == 1 else None


def _function(bus: str) -> str:
    """'0000:61:00' (the driver's short form) -> '0000:61:00.0'; a full address is kept."""
    return bus if "." in bus else f"{bus}.0"


def _message(line: str) -> str:
    """A continuation line without its time stamp: "[ 12.3] NVRM: x" -> "NVRM: x"."""
    return MONOTONIC.sub("", line.strip()).strip()
