"""Host facts: OS, CPU, memory, Python, virtualisation (py-cpuinfo and psutil)."""

from __future__ import annotations

import platform
import sys
from pathlib import Path
from typing import Any

from rigcheck.facts.host.dmi import probe_dmi
from rigcheck.facts.probe import CommandRunner, guarded

# The SIMD features that decide CPU matmul peak and bf16 support; py-cpuinfo spells them so.
SIMD_FLAGS = (
    "sse4_2", "avx", "avx2", "fma", "avx512f", "avx512_bf16", "avx512_vnni",
    "amx_bf16", "amx_tile", "asimd", "sve", "sve2", "bf16", "i8mm", "sme",
)  # fmt: skip

# What macOS's `sysctl hw.optional` calls the same features on Apple silicon.
APPLE_FEATURES = {"advsimd": "asimd", "neon": "asimd", "feat_bf16": "bf16",
                  "feat_i8mm": "i8mm", "feat_sme": "sme"}  # fmt: skip


def probe_host(run: CommandRunner) -> dict[str, Any]:
    """Everything about the host that a check or a report needs."""
    cpu = guarded(lambda: _cpu_info(run))
    return {
        "os": platform.system(),
        "os_release": guarded(_os_release),
        "kernel": platform.release(),
        "machine": platform.machine(),
        "hostname": platform.node(),
        "python": platform.python_version(),
        "python_executable": sys.executable,
        "cpu": cpu,
        "memory_total_bytes": guarded(lambda: _psutil().virtual_memory().total),
        "memory_available_bytes": guarded(lambda: _psutil().virtual_memory().available),
        "virtualization": guarded(lambda: _virtualization(run, cpu)),
        "dmi": guarded(probe_dmi),  # the platform (cloud instance type or board maker)
    }


def _psutil():
    import psutil  # imported where used so a broken install is one probe's error

    return psutil


def _cpu_info(run: CommandRunner) -> dict[str, Any]:
    import cpuinfo

    info = cpuinfo.get_cpu_info()
    flags = set(info.get("flags", []))
    if platform.system() == "Darwin" and not flags:
        flags = _apple_features(run)  # py-cpuinfo reads no flags on Apple silicon
    psutil = _psutil()
    freq = psutil.cpu_freq()
    return {
        "model": info.get("brand_raw") or platform.processor(),
        "arch": info.get("arch"),
        "cores_physical": psutil.cpu_count(logical=False),
        "cores_logical": psutil.cpu_count(logical=True),
        "max_mhz": round(freq.max) if freq and freq.max else None,
        "advertised_hz": (info.get("hz_advertised") or [None])[0],
        "simd_flags": sorted(flags.intersection(SIMD_FLAGS)),
        "hypervisor_flag": "hypervisor" in flags,
    }


def _apple_features(run: CommandRunner) -> set[str]:
    """Features `sysctl hw.optional` reports as 1, in py-cpuinfo's names."""
    result = run(["sysctl", "hw.optional"])
    enabled = set()
    for line in result.stdout.splitlines():
        key, _, value = line.partition(":")
        if value.strip() == "1":
            enabled.add(key.rsplit(".", 1)[-1].strip().lower())
    return {APPLE_FEATURES[f] for f in enabled if f in APPLE_FEATURES}


def _os_release() -> str | None:
    path = Path("/etc/os-release")
    if not path.exists():
        return platform.platform()
    fields = dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)
    return fields.get("PRETTY_NAME", "").strip('"') or None


def _virtualization(run: CommandRunner, cpu: Any) -> str:
    """systemd-detect-virt where present, else the CPU's hypervisor flag."""
    try:
        result = run(["systemd-detect-virt"])
        answer = result.stdout.strip()
        if answer:
            return answer  # "none", "kvm", "docker", ...
    except (FileNotFoundError, OSError):
        pass
    if isinstance(cpu, dict) and "hypervisor_flag" in cpu:
        return "hypervisor (flag)" if cpu["hypervisor_flag"] else "none detected"
    return "unknown"
