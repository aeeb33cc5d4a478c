"""NVIDIA's Xid codes: what each means, whose fault it is, and what to do about it.

Data, not logic. Meanings and actions follow NVIDIA's Xid catalogue (SOURCE below: the Xid
error listing, and for Ampere and later the catalogue's "Resolution Bucket (Immediate Action)"
column: RESTART_APP, RESET_GPU, RESTART_BM, CONTACT_SUPPORT). `cause` sorts a code into:

- "application": the program on the GPU did something wrong (an illegal address, a kernel that
  faulted). The machine is not at fault; the code is reported, never failed on.
- "machine": the GPU, its memory, its links, its firmware or the board around it. Fails.
- "driver": the driver or its firmware (GSP) failed; a reset or reboot usually clears it, a
  recurrence needs support. Fails, like a machine fault: the node is not usable until then.

A code missing from this table is judged as a machine fault (fail closed), with its number, so
the reader can look it up.
"""

from __future__ import annotations

from dataclasses import dataclass

SOURCE = (
    "NVIDIA Xid errors (https://docs.nvidia.com/deploy/xid-errors/index.html), its Xid catalogue "
    "for Ampere and later (analyzing-xid-catalog.html: resolution buckets), and NVIDIA GPU "
    "memory error management (https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/)"
)

# Azure HPC health checks fail a node on these codes (customTests/azure_gpu_xid.nhc, XID_EC).
AZURE_HPC_XIDS = frozenset(
    {48, 56, 57, 58, 62, 63, 64, 65, 68, 69, 73, 74, 79, 80, 81, 92, 119, 120}
)

RESET = "reset the GPU (`nvidia-smi -r -i <index>` with no process on it) or reboot the node"
REBOOT = "drain the node and reboot it"
RMA = "if it recurs after a reset, ask the provider to replace the GPU (RMA)"
APP = "an application error: fix or restart the program; the machine is not at fault"


@dataclass(frozen=True)
class Xid:
    code: int
    meaning: str
    cause: str  # "application", "machine" or "driver"
    action: str


CATALOG = {
    x.code: x
    for x in [
        Xid(13, "Graphics Engine Exception (often an out-of-range access in a kernel)",
            "application", f"{APP}; run compute-sanitizer on it"),
        Xid(31, "GPU memory page fault (MMU fault: an illegal address)", "application",
            f"{APP}; run compute-sanitizer on it"),
        Xid(43, "GPU stopped processing (a channel of the faulting application was reset)",
            "application", APP),
        Xid(45, "Preemptive cleanup after previous errors (a process was killed)",
            "application", f"{APP}; look at the Xid logged just before it"),
        Xid(48, "Double-bit (uncorrectable) ECC error in GPU memory", "machine",
            f"{RESET} to retire or remap the row; {RMA}"),
        Xid(56, "Display engine error", "machine", f"{RESET}; {RMA}"),
        Xid(57, "Error programming video memory interface", "machine", f"{RESET}; {RMA}"),
        Xid(58, "Unstable video memory interface detected (EDC error)", "machine",
            f"{RESET}; {RMA}"),
        Xid(61, "Internal micro-controller breakpoint/warning (PMU)", "driver",
            f"{RESET}; if it recurs, ask the provider (driver or firmware)"),
        Xid(62, "Internal micro-controller halt (PMU)", "machine", f"{RESET}; {RMA}"),
        Xid(63, "ECC page retirement or row remapping recording event", "machine",
            f"{RESET} to activate the remap; watch for Xid 64 and the remapped-row count"),
        Xid(64, "ECC page retirement or row remapper recording failure", "machine",
            f"{RESET}; the memory cannot be repaired any more: {RMA}"),
        Xid(65, "Video processor exception", "machine", f"{RESET}; {RMA}"),
        Xid(68, "NVDEC0 (video decoder) exception", "machine", f"{RESET}; {RMA}"),
        Xid(69, "Graphics engine class error", "machine", f"{RESET}; {RMA}"),
        Xid(73, "NVENC2 (video encoder) error", "machine", f"{RESET}; {RMA}"),
        Xid(74, "NVLink error (a link or its far end reported a fault)", "machine",
            f"{RESET}; `nvidia-smi nvlink -e` shows the link; if it recurs the board or "
            "NVSwitch tray needs service: ask the provider"),
        Xid(79, "GPU has fallen off the bus (lost from PCIe)", "machine",
            f"{REBOOT}; check power, riser/cable seating and cooling; {RMA}"),
        Xid(80, "Corrupted data sent to GPU", "machine", f"{REBOOT}; {RMA}"),
        Xid(81, "VGA subsystem error", "machine", f"{REBOOT}; {RMA}"),
        Xid(92, "High single-bit ECC error rate", "machine",
            f"the memory is wearing out: {RESET}, watch the corrected-error count; {RMA}"),
        Xid(94, "Contained ECC error (the affected application was stopped)", "machine",
            f"restart the application; {RESET} at the next chance to remap the row; {RMA}"),
        Xid(95, "Uncontained ECC error (every application on the GPU was affected)", "machine",
            f"{RESET} now; {RMA}"),
        Xid(109, "Context switch timeout", "driver", f"{RESET}; if it recurs, ask the provider"),
        Xid(119, "GSP RPC timeout (the GPU System Processor did not answer)", "driver",
            f"{RESET}; if it recurs, update the driver or ask the provider"),
        Xid(120, "GSP error (the GPU System Processor faulted)", "driver",
            f"{RESET}; if it recurs, update the driver or ask the provider"),
        Xid(121, "C2C (chip-to-chip) link corrected error", "machine",
            f"{RESET} at the next chance; {RMA}"),
        Xid(140, "Unrecovered ECC error", "machine", f"{RESET}; {RMA}"),
        Xid(143, "GPU initialization failure", "machine", f"{REBOOT}; {RMA}"),
        Xid(154, "GPU recovery action changed (the driver asks for a reset or reboot)",
            "machine", "do the recovery action the log line names (reset, reboot, drain)"),
    ]
}  # fmt: skip


def lookup(code: int) -> Xid:
    """The catalogue entry; an unknown code is a machine fault until someone looks it up."""
    if code in CATALOG:
        return CATALOG[code]
    return Xid(
        code,
        "not in rigcheck's catalogue",
        "machine",
        "look the code up in NVIDIA's Xid catalogue (docs.nvidia.com/deploy/xid-errors) "
        "and add it to rigcheck/facts/xid_catalog.py",
    )
