"""GPUs that pass for one another at a glance, and the facts rigcheck reads that tell them apart.

Detection goes by PCI device id (rigcheck/detect.py), so a look-alike is never taken for the
class it resembles; what this module adds is the message: a refused machine is told which
product it is, which class it was taken for, and what differs, instead of "no class matches".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class LookAlike:
    """A product with no class of its own that is easily mistaken for one."""

    product: str  # the name NVML (or ROCm torch) gives it
    pci_device_id: str
    resembles: str  # the class it is mistaken for
    differs: str  # the facts that tell them apart


# Sources: NVIDIA/open-gpu-kernel-modules README (595.45.04), Compatible GPUs table, and the
# PCI ID repository (pci.ids), for names and ids; the memory sizes are the vendors' datasheets.
NOT_A_CLASS = (
    LookAlike("NVIDIA A10", "0x2236", "a10g",
              "PCI id 0x2236, not the A10G's 0x2237: the 150 W A10 has other tensor rates than "
              "AWS's 300 W A10G"),
    LookAlike("NVIDIA GeForce RTX 5080", "0x2C02", "rtx5090",
              "PCI id 0x2C02 and 16 GB GDDR7, not the RTX 5090's 0x2B85 and 32 GB"),
    LookAlike("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "0x2BB1", "rtx_pro_6000",
              "PCI id 0x2BB1, not the Server Edition's 0x2BB5: the same GB202 chip on a desktop "
              "card"),
    LookAlike("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "0x2BB4",
              "rtx_pro_6000",
              "PCI id 0x2BB4 and a 300 W limit, not the Server Edition's 0x2BB5 and 600 W"),
    LookAlike("NVIDIA H20-3e", "0x232C", "h20",
              "PCI id 0x232C and 141 GB HBM3e, not the H20's 0x2329 and 96 GB HBM3"),
    # Names, ids and memory as NVML reads them in public captures (fixtures/nvidia_smi: the
    # thamada-* files), the ids also in pci.ids.
    LookAlike("NVIDIA H100 NVL", "0x2321", "h100_pcie",
              "PCI id 0x2321 and 94 GB HBM3 (95830 MiB), not the H100 PCIe's 0x2331 and 80 GB: "
              "a dual-slot card sold in NVLink-bridged pairs, 350-400 W"),
    LookAlike("Tesla V100-SXM2-16GB", "0x1DB1", "v100",
              "PCI id 0x1DB1 and 16 GB HBM2, not the 32 GB board's 0x1DB5"),
    LookAlike("NVIDIA GH200 480GB", "0x2342", "h100",
              "PCI id 0x2342: a Hopper GPU with 96 GB HBM3 on a Grace CPU (NVLink-C2C), not an "
              "HGX H100's 0x2330 and 80 GB"),
    LookAlike("NVIDIA RTX 6000 Ada Generation", "0x26B1", "l40",
              "PCI id 0x26B1, not the L40's 0x26B5: the same AD102 die and 48 GB on a "
              "workstation card (300 W, blower, display outputs)"),
)  # fmt: skip

# Pairs of classes that pass for each other, and what tells them apart.
CLASS_PAIRS = (
    ("l40", "l40s", "PCI id 0x26B5 against 0x26B9: the same AD102 die and 48 GB, but the L40S "
     "has twice the L40's dense tensor rate and 350 W against 300 W"),
    ("h20", "h100", "PCI id 0x2329 against 0x2330: 96 GB against 80 GB, 78 SMs against 132"),
    ("b200", "b300", "PCI id 0x2901 against 0x3182: compute capability 10.0 against 10.3, "
     "180 GB against 288 GB"),
    ("mi300x", "mi325x", "PCI id 0x74A1 against 0x74A5: 192 GB HBM3 against 256 GB HBM3e"),
)  # fmt: skip


def pci_id(device: dict[str, Any]) -> str | None:
    pci = device.get("pci")
    found = pci.get("device_id") if isinstance(pci, dict) else None
    return found.upper().replace("0X", "0x") if isinstance(found, str) else None


def product_look_alike(device: dict[str, Any]) -> LookAlike | None:
    """The classless product this device is, when it is one of the known look-alikes."""
    found = pci_id(device)
    return next((a for a in NOT_A_CLASS if a.pci_device_id == found), None)


def pair_difference(one: str, other: str) -> str | None:
    """What tells two look-alike classes apart; None when they are not a known pair."""
    for a, b, differs in CLASS_PAIRS:
        if {a, b} == {one, other}:
            return differs
    return None


def mistaken_for(device: dict[str, Any], expected: str, actual: str | None) -> str:
    """Why a device of class `actual` (None: no class) is not of class `expected`, or ''."""
    alike = product_look_alike(device)
    if alike is not None and alike.resembles == expected:
        return f": a look-alike of {expected}, not one ({alike.differs})"
    if actual is None:
        return ""
    differs = pair_difference(expected, actual)
    if differs is not None:
        return f": class {actual}, a look-alike of {expected} ({differs}); check it as {actual}"
    return f": that is class {actual}; check it as {actual}"


def classless_note(device: dict[str, Any]) -> str:
    """For a device no class matches: the class it resembles and why it is not of it, or ''."""
    alike = product_look_alike(device)
    if alike is None:
        return ""
    return f"{alike.product} looks like class {alike.resembles} but is not: {alike.differs}"
