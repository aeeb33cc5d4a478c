"""What the firmware says the machine is (SMBIOS/DMI through /sys/class/dmi/id): the platform.

A cloud VM names itself there (AWS Nitro: sys_vendor "Amazon EC2", product_name the instance
type, e.g. "g4dn.xlarge"); bare metal names its board maker. Read, never judged here:
rigcheck/platforms.py matches it against expected/platforms/.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

DMI = Path("/sys/class/dmi/id")
FIELDS = ("sys_vendor", "product_name", "board_vendor", "board_name")


def probe_dmi(root: Path = DMI) -> dict[str, Any] | None:
    """The DMI strings that name the machine; None where the host has no DMI (macOS, ARM
    boards without SMBIOS). An unreadable file is a None field, not an error."""
    if not root.is_dir():
        return None
    return {field: _read(root / field) for field in FIELDS}


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip() or None
    except OSError:
        return None
