"""NVIDIA's Xid codes: what each means, whose fault it is, and what to do about it.

Every code comes from NVIDIA's Xid catalogue (xid_table.py, SOURCE below). Its "Resolution
Bucket (Immediate Action)" says what to do now; rigcheck sorts each bucket into a class (BUCKETS):

- "application": the program on the GPU did something wrong (RESTART_APP). Reported, not failed.
- "informational": NVIDIA's immediate action is IGNORE: nothing to do with the machine now
  (a row remap recorded, a nonfatal NVLink event). Reported, not failed; the ECC and remap
  counters (counters.py) judge the memory itself.
- "machine": the GPU, its memory, its links, its firmware or the board (RESET_GPU, RESTART_BM,
  CONTACT_SUPPORT, ...). Fails.
- "driver": the driver or its GPU System Processor firmware: RESET_GPU where NVIDIA's
  investigatory action is INVESTIGATE_SW (Xid 119, 120), UPDATE_SWFW. Fails like a machine fault.

NVIDIA decides two families by the line's text, not its code (judge()): NVLink5 Xids 144-150
print "Fatal" or "Nonfatal" after the unit name, and Xid 154 names the recovery action the
driver asks for ("GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)").

Where this differs from older advice: Azure's HPC health checks (customTests/azure_gpu_xid.nhc)
fail a node on Xid 63, 80 and 92, which NVIDIA's current catalogue buckets as IGNORE,
RESTART_APP and IGNORE; rigcheck follows NVIDIA. A code missing from the table fails closed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rigcheck.facts.kernel_log.xid_table import TABLE

CATALOGUE_URL = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html"
SOURCE = (
    f"NVIDIA's Xid catalogue for Ampere and later ({CATALOGUE_URL}: immediate actions, and the "
    "'XID 144-150 Decode' sheet for NVLink5 severities), NVIDIA Xid errors "
    "(https://docs.nvidia.com/deploy/xid-errors/index.html) and NVIDIA GPU memory error "
    "management (https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/)"
)

RESET = "reset the GPU (`nvidia-smi -r -i <index>` with no process on it) or reboot the node"
REBOOT = "drain the node and reboot it"
RMA = "if it recurs after a reset, ask the provider to replace the GPU (RMA)"
NOT_FAILED = frozenset({"application", "informational"})

# NVIDIA's immediate action -> (rigcheck's class, what to do). NVLINK5 and 154: see judge().
BUCKETS = {
    "RESTART_APP": ("application", "restart the application; the machine is not at fault"),
    "WORKFLOW_XID_45": (
        "application",
        "a channel torn down after an earlier error: judge the Xid logged before it",
    ),
    "IGNORE": ("informational", "no action on the machine now; look again if it recurs"),
    "RESET_GPU": ("machine", f"{RESET}; {RMA}"),
    "RESTART_BM": (
        "machine",
        f"{REBOOT} (a bare-metal restart); check power, riser/cable seating and cooling; {RMA}",
    ),
    "CONTACT_SUPPORT": ("machine", "drain the node and ask the provider"),
    "CHECK_MECHANICALS": (
        "machine",
        "drain the node: the board's auxiliary power is not connected; ask the provider",
    ),
    "WORKFLOW_XID_48": ("machine", f"{RESET} to retire or remap the row; {RMA}"),
    "WORKFLOW_NVLINK_ERR": (
        "machine",
        f"{RESET}; `nvidia-smi nvlink -e` shows the link; if it recurs the board or NVSwitch "
        "tray needs service: ask the provider",
    ),
    "UPDATE_SWFW": ("driver", "update the driver and the GPU firmware"),
    "RESTART_VM": ("driver", "restart the virtual machine"),
    "CHECK_UVM": (
        "driver",
        "read the nvidia-uvm messages around it; ask the provider if it recurs",
    ),
    "": (
        "machine",
        "NVIDIA's catalogue names no immediate action for it yet: drain the node and ask the "
        "provider",
    ),
}
DRIVER_INVESTIGATION = "INVESTIGATE_SW"  # RESET_GPU codes NVIDIA sends to software (119, 120)
NVLINK5 = range(144, 151)
BY_TEXT = frozenset({*NVLINK5, 154})  # codes NVIDIA judges by the line's text
SEVERITY = re.compile(r"\b(Nonfatal|Non-fatal|Fatal)\b")
RECOVERY = re.compile(r"recovery action changed from \S+ \(([^)]*)\) to \S+ \(([^)]*)\)")
# Xid 154's recovery actions (NVML's nvmlDeviceGpuRecoveryAction_t names, as the driver prints).
RECOVERY_ACTIONS = {
    "GPU Reset Required": f"{RESET}: the driver asks for a GPU reset; {RMA}",
    "Node Reboot Required": f"{REBOOT}: the driver asks for a node reboot; {RMA}",
    "Drain P2P": "drain the GPU's peer-to-peer (NVLink) traffic, then reset the GPU",
    "Drain and Reset": f"drain the node, then {RESET}",
}


@dataclass(frozen=True)
class Xid:
    code: int
    meaning: str
    cause: str  # "application", "informational", "machine" or "driver"
    action: str  # what to do, ending with NVIDIA's bucket in brackets
    bucket: str = ""


def _from_row(code: int, mnemonic: str, text: str, bucket: str, investigate: str) -> Xid:
    if bucket in ("WORKFLOW_NVLINK5_ERR", "XID_154"):
        return Xid(code, f"{text} ({mnemonic})", "machine", _judged_by_text(code), bucket)
    cause, action = BUCKETS.get(bucket, BUCKETS["CONTACT_SUPPORT"])
    if bucket == "RESET_GPU" and investigate.startswith(DRIVER_INVESTIGATION):
        cause = "driver"
    unused = " (NVIDIA lists the code as unused)" if text == "Unused" else ""
    shown = bucket or "none given"
    return Xid(code, f"{text} ({mnemonic}){unused}", cause, f"{action} [NVIDIA: {shown}]", bucket)


def _judged_by_text(code: int) -> str:
    if code == 154:
        return "do the recovery action the line names (reset, reboot, drain)"
    return "NVIDIA decides by the line's Fatal/Nonfatal word; a fatal one: " + RESET


CATALOG = {row[0]: _from_row(*row) for row in TABLE}


def lookup(code: int) -> Xid:
    """The catalogue entry; an unknown code is a machine fault until someone looks it up."""
    if code in CATALOG:
        return CATALOG[code]
    return Xid(
        code,
        "not in NVIDIA's Xid catalogue as rigcheck holds it "
        "(rigcheck/facts/kernel_log/xid_table.py)",
        "machine",
        "drain the node and ask the provider; look the code up in NVIDIA's current catalogue "
        f"({CATALOGUE_URL}) and add it to rigcheck/facts/kernel_log/xid_table.py",
    )


def judge(code: int, text: str) -> Xid:
    """The entry for one logged event: by code, and by its text where NVIDIA decides so."""
    xid = lookup(code)
    if code in NVLINK5:
        return _nvlink5(xid, text)
    if code == 154:
        return _recovery(xid, text)
    return xid


def _nvlink5(xid: Xid, text: str) -> Xid:
    """NVLink5 Xids: "145, RLW_REMAP Fatal XC0 i0 Link 00 (...)" (NVIDIA's 144-150 decode)."""
    found = SEVERITY.search(text)
    if found is None:
        action = f"the line has no Fatal/Nonfatal word rigcheck can read: judged fatal; {RESET}"
        return Xid(xid.code, xid.meaning, "machine", action, xid.bucket)
    if found[1] == "Fatal":
        return Xid(xid.code, f"{xid.meaning}, fatal", "machine", f"{RESET} [NVIDIA: RESET_GPU]")
    return Xid(
        xid.code,
        f"{xid.meaning}, nonfatal",
        "informational",
        "no action on the machine now; if it recurs on the same link, ask the provider",
        xid.bucket,
    )


def _recovery(xid: Xid, text: str) -> Xid:
    """Xid 154: the driver names the recovery it needs; None means it no longer needs one."""
    found = RECOVERY.search(text)
    if found is None:
        action = f"the line names no recovery action rigcheck can read: {REBOOT}"
        return Xid(xid.code, xid.meaning, "machine", action, xid.bucket)
    wanted = found[2].strip()
    meaning = f"{xid.meaning}: {found[1]} -> {wanted}"
    if wanted == "None":
        return Xid(xid.code, meaning, "informational", "none: the driver needs no recovery")
    action = RECOVERY_ACTIONS.get(wanted, f"do what the driver asks ({wanted}); ask the provider")
    return Xid(xid.code, meaning, "machine", action, xid.bucket)
