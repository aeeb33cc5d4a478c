"""Apple silicon facts through sysctl; the GPU is one device sharing the host's memory."""

from __future__ import annotations

import platform
from typing import Any

from rigcheck.facts.probe import CommandRunner, guarded


def is_apple_silicon() -> bool:
    return platform.system() == "Darwin" and platform.machine() == "arm64"


def sysctl(run: CommandRunner, key: str) -> str:
    result = run(["sysctl", "-n", key])
    if result.returncode != 0:
        raise RuntimeError(f"sysctl {key} failed: {result.stderr.strip()}")
    return result.stdout.strip()


def probe_apple_device(run: CommandRunner, mps_available: Any) -> dict[str, Any]:
    """The Apple GPU as one device: chip name, unified memory, macOS version."""
    memory = guarded(lambda: int(sysctl(run, "hw.memsize")))
    return {
        "index": 0,
        "vendor": "apple",
        "name": guarded(lambda: sysctl(run, "machdep.cpu.brand_string")),
        "model": guarded(lambda: sysctl(run, "hw.model")),
        "macos": platform.mac_ver()[0],
        "memory_total_bytes": memory,
        "unified_memory": True,
        "mps_available": mps_available,
    }
