"""The ConnectX NIC driver's (mlx5_core) fault records in the kernel log: a NIC whose firmware
stopped answering or asserted, whose health recovery failed, whose PCI slot was lost, or whose
firmware command timed out. Llama 3 counts 7 of its 419 interruptions on the NIC, Crusoe's
H200 fleet a third of its failures on InfiniBand: a NIC in this state passes every idle link
check (its port may still read ACTIVE) while the job on it dies.

mlx5_core prints through dev_err/dev_info (mlx5_core_err, mlx5_core_info), so every line starts
`mlx5_core 0000:0d:00.0: ` (its netdev after the address for mlx5e lines: `mlx5_core
0000:3b:00.0 ens1f0np0: `; a sub-function's `mlx5_core.sf mlx5_core.sf.25: ` names no PCI
address), then the function and line on newer kernels (`poll_health:801:(pid 0): `). The
patterns are the driver's format strings (Linux drivers/net/ethernet/mellanox/mlx5/core/), each
but "Link down" and "health recovery succeeded" seen in a real log
(fixtures/realworld/kernel_log.json):

- health.c, poll_health: "device's health compromised - reached miss count" (the firmware's
  health counter stopped), "Fatal error %u detected" (the fatal sensors), and print_health_info's
  dump of the firmware's health buffer: "Health issue observed, %s, severity(%d) %s:", the
  assert_var/assert_exit_ptr/fw_ver/... lines, and "synd 0x%x: %s", the syndrome (firmware
  internal error, unrecoverable hardware error, high temperature ...): the record's event line.
- health.c, mlx5_health_try_recover: "starting health recovery flow", "health recovery flow
  aborted, PCI reads still not working", "health recovery failed", "health recovery succeeded"
  (older kernels: "health revovery succeded").
- cmd.c: "%s(0x%x) timeout. Will cause a leak of a command resource" (the firmware did not
  answer a command); mlx5_cmd_out_err/mlx5_cmd_check's "%s(0x%x) op_mod(0x%x) failed, status
  %s(0x%x), syndrome (0x%x)" (a command the firmware refused: reported, as NVIDIA's NVSentinel
  does, since drivers and tools log some at boot on healthy NICs).
- health.c, print_health_info: "PCI slot is unavailable" (the health buffer reads all ones: the
  NIC is gone from the bus, a surprise link down or an EEH freeze).
- en_main.c, mlx5e_update_carrier: "Link down" / "Link up": a port's carrier; a link that went
  down is reported (a cable, the switch, or a peer reboot), its state is the fabric checks'.

Severity follows NVIDIA's NVSentinel NIC monitor (docs.nvidia.com/nvsentinel/components/
nic-health-monitor/syslog-detection-and-correlation): only deterministic failures (health poll
failed, unrecoverable syndromes, command timeouts) fail the node; the rest is reported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from rigcheck.facts.kernel_log import line_form

SOURCE = (
    "the mlx5_core driver's messages (Linux drivers/net/ethernet/mellanox/mlx5/core/: health.c, "
    "cmd.c, en_main.c)"
)
# "mlx5_core 0000:0d:00.0: ..." / "mlx5_core 0000:3b:00.0 ens1f0np0: ..." / the sub-function's
# "mlx5_core.sf mlx5_core.sf.25: ..." (no PCI address: its parent PF's record names it)
PREFIX = re.compile(
    r"\bmlx5_core(?:\.sf)? (?:(?P<bus>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])"
    r"|mlx5_core\.sf\.\d+)(?: (?P<netdev>[\w.-]+))?:\s*(?P<text>.*)"
)
# The health buffer's dump after a fault: no event of its own, but read (unexplained.py)
DETAIL = re.compile(
    r"print_health_info:|Health issue observed|assert_var\[|assert_exit_ptr|assert_callra|"
    r"\bext_synd\b|\bhw_id\b|\birisc_index\b|\bfw_ver\b|\brfr \d|\bseverity \d|"
    r"wait vital counter value|mlx5_pci_slot_reset was called|enable hca failed|"
    r"FW is unable to respond to initialization segment reads"
)
RESET = (
    "drain the node; reset the NIC (`mlxfwreset -d <pci> reset`) or reboot; `devlink health "
    "show` and the health buffer logged with it say what failed"
)
RMA = "if it recurs, update the NIC firmware, then ask the provider to replace the NIC"


@dataclass(frozen=True)
class Mlx5Fault:
    kind: str
    pattern: re.Pattern
    meaning: str
    cause: str  # as xid_catalog.Xid.cause: "machine" fails; "informational" is reported
    action: str


CATALOGUE = (
    Mlx5Fault(
        "health_compromised",
        re.compile(r"health compromised - reached miss count"),
        "the NIC's firmware stopped updating its health counter: it no longer answers",
        "machine",
        f"{RESET}; {RMA}",
    ),
    Mlx5Fault(
        "firmware_fatal",
        re.compile(r"\bsynd 0x[0-9a-fA-F]+: |Fatal error \d+ detected"),
        "the NIC's firmware reported a fatal error (its health syndrome: an assert, an "
        "unrecoverable hardware error, over-temperature)",
        "machine",
        f"{RESET}; {RMA}",
    ),
    Mlx5Fault(
        "recovery_failed",
        re.compile(r"health recovery flow aborted|health recovery failed"),
        "the driver could not recover the NIC after a firmware fault: it is unusable",
        "machine",
        f"reboot the node (or power-cycle it if the NIC stays gone); {RMA}",
    ),
    Mlx5Fault(
        "pci_error",
        re.compile(r"PCI slot is unavailable"),
        "the NIC's PCI slot was lost (a PCIe error the driver could not ride out)",
        "machine",
        "drain the node and reboot it; check the slot, riser and power; " + RMA,
    ),
    Mlx5Fault(
        "command_timeout",
        re.compile(r"timeout\. Will cause a leak of a command resource"),
        "a firmware command timed out: the driver can no longer drive the NIC",
        "machine",
        f"{RESET}; {RMA}",
    ),
    Mlx5Fault(
        "recovery_started",
        re.compile(r"starting health recovery flow"),
        "the driver reset the NIC after a firmware fault (jobs using it lost their queues)",
        "informational",
        "find the fault logged before it; if it recurs, ask the provider",
    ),
    Mlx5Fault(
        "recovery_succeeded",
        re.compile(r"health re(?:co|vo)very succe(?:e)?ded"),
        "the driver recovered the NIC after a firmware fault",
        "informational",
        "find the fault logged before it; if it recurs, ask the provider",
    ),
    Mlx5Fault(
        "command_failed",
        re.compile(r"\) failed, status [\w ]+\(0x[0-9a-fA-F]+\)"),
        "the NIC's firmware refused a command (a bad parameter or state: often a tool or "
        "driver asking what this firmware does not support)",
        "informational",
        "if jobs fail on this NIC, update the driver and NIC firmware together",
    ),
    Mlx5Fault(
        "link_down",
        re.compile(r"^Link down\b"),
        "a port's link went down (a cable, the switch port, or a peer that rebooted)",
        "informational",
        "if it recurs, check the cable and the switch port (`ibstat`, `mlxlink -d <pci>`)",
    ),
)


def classify(text: str) -> Mlx5Fault | None:
    """The first catalogue entry a line's message matches (the message: after the prefix)."""
    return next((f for f in CATALOGUE if f.pattern.search(text)), None)


def find(kind: str) -> Mlx5Fault:
    """An event's entry by kind; a kind today's table lacks (an old snapshot) fails the node."""
    known = next((f for f in CATALOGUE if f.kind == kind), None)
    if known is not None:
        return known
    what = f"an mlx5_core record of kind {kind!r}"
    return Mlx5Fault(kind, re.compile(re.escape(kind)), what, "machine", f"{RESET}; {RMA}")


def parse_mlx5(line: str) -> dict[str, Any] | None:
    """One mlx5_core event from a line, or None when it is not one."""
    match = PREFIX.search(line)
    if match is None:
        return None
    text = _message(match["text"])
    fault = classify(text)
    if fault is None:
        return None
    return {
        "t_s": line_form.seconds(line),
        "bus_id": match["bus"].lower() if match["bus"] else None,
        "kind": fault.kind,
        "text": match["text"].strip()[:300],
    }


def parse_mlx5_lines(lines: list[str]) -> list[dict[str, Any]]:
    """Every mlx5_core event in the lines, in order."""
    return [e for e in map(parse_mlx5, lines) if e is not None]


def explains(line: str) -> bool:
    """Whether a rule here reads the line: an event, or its health buffer's dump."""
    match = PREFIX.search(line)
    if match is None:
        return False
    return classify(_message(match["text"])) is not None or bool(DETAIL.search(match["text"]))


def _message(text: str) -> str:
    """The message without the function and line newer kernels print before it:
    "poll_health:801:(pid 0): device's ..." -> "device's ..."."""
    return re.sub(r"^\w+:\d+:\(pid \d+\):\s*", "", text)
