"""sysfs AER files written from a snapshot's own device record, so the counter probe fed them
must write that record back. (NVML's counters come from rigcheck/testing/nvml_sim, below the real
pynvml.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rigcheck.facts.nvidia import counters

AER_LINES = {  # the per-type lines the kernel writes before the total (drivers/pci/pcie/aer.c)
    "correctable": ["RxErr", "BadTLP", "BadDLLP", "Rollover", "Timeout", "TOTAL_ERR_COR"],
    "nonfatal": ["DLP", "SDES", "TLP", "FCP", "CmpltTO", "MalfTLP", "TOTAL_ERR_NONFATAL"],
    "fatal": ["DLP", "SDES", "TLP", "FCP", "CmpltTO", "MalfTLP", "TOTAL_ERR_FATAL"],
}


def write_aer(sysfs: Path, device: dict[str, Any]) -> None:
    """sysfs aer_dev_* files holding the device's counts (none where pcie_aer is None)."""
    folder = sysfs / device["pci"]["bus_id"]
    folder.mkdir(parents=True, exist_ok=True)
    aer = device["pcie_aer"]
    if aer is None:
        return
    for key, name in counters.AER_FILES.items():
        lines = [f"{n} {aer[key] if n.startswith('TOTAL') else 0}" for n in AER_LINES[key]]
        (folder / name).write_text("\n".join(lines) + "\n")
