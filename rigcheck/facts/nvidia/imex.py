"""IMEX facts: the channels that let a Grace-Blackwell tray share GPU memory across its NVLink
domain (multi-node NVLink, NVL72).

The IMEX daemon (nvidia-imex) exports memory between the trays of one NVLink domain, and a
process imports it through an IMEX channel, a character device under
/dev/nvidia-caps-imex-channels/ (channel0 on a single-tenant node: the driver creates it with
NVreg_CreateImexChannel0=1, or `mknod` from the major number /proc/devices lists as
nvidia-caps-imex-channels). NVIDIA IMEX guide, "IMEX channels":
https://docs.nvidia.com/multi-node-nvlink-systems/imex-guide/imexchannels.html
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from rigcheck.facts.probe import guarded

ROOT = Path("/")
CHANNEL_DIR = "dev/nvidia-caps-imex-channels"
CHANNEL = re.compile(r"^channel(\d+)$")


def probe_imex(root: Path = ROOT) -> dict[str, Any]:
    """{"channel_dir": bool, "channels": [N, ...]}; an error record if the folder is unreadable."""
    return guarded(lambda: _imex(root / CHANNEL_DIR))


def _imex(folder: Path) -> dict[str, Any]:
    if not folder.is_dir():
        return {"channel_dir": False, "channels": []}
    numbers = [CHANNEL.match(p.name) for p in folder.iterdir()]
    return {"channel_dir": True, "channels": sorted(int(m.group(1)) for m in numbers if m)}
