"""What the perf judging tests feed the suite: synthetic facts, spec figures and measurements
(imported by name: pytest puts this folder on sys.path, as tests/reports does with its helpers)."""

from __future__ import annotations

import copy
from typing import Any

H100_BUS_IDS = ["0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0"]

# Synthetic h100 figures (from expected/h100.json's tiers): what the tests judge by.
BF16 = {
    "unit": "TFLOP/s",
    "definition": "2*m*n*k / median time, bf16 (synthetic test figure)",
    "datasheet": {"value": 989.5, "source": "H100 SXM datasheet, dense bf16"},
    "achievable": {"value": 794.5, "source": "stas00/ml-engineering MAMF table"},
    "floor": {"value": 635.0, "source": "rigcheck floor policy: 0.8 x achievable"},
    "warn_band": 0.1,
}
COPY = {
    "unit": "GB/s",
    "definition": "device-to-device copy, read + write counted (synthetic test figure)",
    "datasheet": {"value": 3350.0, "source": "H100 SXM datasheet: 3.35 TB/s"},
    "achievable": {"value": 3000.0, "source": "this project's lent H100, 2026-11"},
    "floor": {"value": 2400.0, "source": "rigcheck floor policy: 0.8 x achievable"},
}
UNKNOWN_FP8 = {
    "unit": "TFLOP/s",
    "definition": "torch._scaled_mm e4m3 (synthetic test figure)",
    "datasheet": {"value": 1979.0, "source": "H100 SXM datasheet, dense fp8"},
    "achievable": None,
    "floor": None,
    "unknown_reason": "no measured fp8 figure yet (synthetic test figure)",
}


def h100_facts(gpus: int = 1) -> dict[str, Any]:
    """A minimal healthy H100 SXM snapshot with `gpus` devices (synthetic)."""
    devices = [
        {
            "index": i,
            "vendor": "nvidia",
            "name": "NVIDIA H100 80GB HBM3",
            "pci": {"bus_id": H100_BUS_IDS[i], "device_id": "0x2330", "vendor_id": "0x10DE"},
            "compute_capability": "9.0",
            "clocks": {"sm_mhz": 345, "mem_mhz": 2619, "sm_max_mhz": 1980, "mem_max_mhz": 2619},
            "power": {"limit_w": 700.0, "default_limit_w": 700.0, "draw_w": 70.0},
        }
        for i in range(gpus)
    ]
    return {
        "schema_version": 1,
        "origin": {"kind": "synthetic", "note": "tests/perf: minimal H100 snapshot"},
        "host": {"cpu": {"model": "Intel Xeon Platinum 8480+", "cores_physical": 112}},
        "software": {
            "torch": {"version": "2.5.1+cu124", "build": "cuda", "cuda_version": "12.4"},
            "nvidia_driver": {"present": True, "version": "550.90.07"},
            "flash_attn": {"installed": False},
        },
        "devices": devices,
    }


def cpu_facts() -> dict[str, Any]:
    """A CPU-only host: 2 cores at 2.6 GHz with AVX-512 and avx512_bf16 (synthetic)."""
    facts = copy.deepcopy(h100_facts(0))
    facts["host"]["cpu"] = {
        "model": "AMD EPYC",
        "cores_physical": 2,
        "cores_logical": 2,
        "max_mhz": None,
        "advertised_hz": 2_600_000_000,
        "simd_flags": ["avx2", "avx512_bf16", "avx512f", "fma"],
    }
    facts["software"]["torch"] = {"version": "2.13.0+cpu", "build": "cpu", "cuda_version": None}
    facts["software"]["nvidia_driver"] = {"present": False, "reason": "NVML unavailable"}
    return facts


def measurements(kind: str = "synthetic", **figures: dict[Any, Any]) -> dict[str, Any]:
    """A replay file: measurements(matmul_bf16_tflops={0: 790, 1: [500, 790]})."""
    return {
        "rigcheck_measurements": 1,
        "kind": kind,
        "note": "tests/perf: synthetic figures",
        "measurements": [
            {"key": key, "device": device, "value": value}
            for key, per_device in figures.items()
            for device, value in per_device.items()
        ],
    }
