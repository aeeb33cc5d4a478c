"""How long the host has been up: the interval over which the PCIe replay counters grew.

NVML and amdsmi count replays since the driver loaded (or the GPU was last reset) but report
neither moment. The driver loads during boot on a provisioned node, so the time since boot is
the longest the counter can have been counting; a rate over it is the lowest the link's can be.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rigcheck.facts.probe import error_record

PROC_UPTIME = Path("/proc/uptime")


def probe_uptime(path: Path = PROC_UPTIME) -> dict[str, Any]:
    """{"since_boot_s": seconds, "source": path}, or an error record saying why not."""
    try:
        seconds = float(path.read_text().split()[0])
    except (OSError, ValueError, IndexError) as exc:
        return error_record(f"{path} unreadable ({exc}): the host's uptime is unknown")
    return {"since_boot_s": seconds, "source": str(path)}
