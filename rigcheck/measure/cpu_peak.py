"""The cpu class's peak matmul rate, computed from the host's facts (it has no datasheet).

    peak = cores x clock x SIMD fp32 lanes x FMA pipes x 2 FLOP per FMA

- cores: physical cores (torch runs one thread per physical core by default);
- clock: psutil's maximum MHz, else py-cpuinfo's advertised clock. A VM usually reports the
  base clock, so under turbo the measured figure can exceed 100% of this "peak";
- SIMD fp32 lanes from py-cpuinfo's flags: avx512f 16, avx2+fma 8, asimd/sse 4;
- FMA pipes: 2 per core, assumed (true of most server and desktop cores since Haswell and of
  Arm Neoverse V1/V2; some AVX-512 parts have one 512-bit pipe: their ratio reads low);
- bf16: avx512_bf16 or Arm bf16 (dot products of pairs) doubles the fp32 rate; amx_bf16 gives
  1024 FLOP per cycle per core (Intel's AMX figure); without them bf16 is computed in fp32.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rigcheck.facts import Facts

FMA_PIPES = 2
AMX_BF16_FLOP_PER_CYCLE = 1024


@dataclass(frozen=True)
class Peak:
    tflops: float
    formula: str  # the numbers that went in, for the report


def cpu_peak_tflops(facts: Facts, precision: str) -> Peak | None:
    """The computed peak for fp32 or bf16 matmul; None when the facts do not say enough."""
    cpu = facts.find("host.cpu")
    if not isinstance(cpu, dict) or precision not in ("fp32", "bf16"):
        return None
    cores = cpu.get("cores_physical") or cpu.get("cores_logical")
    mhz, clock_source = _clock_mhz(cpu)
    flags = set(cpu.get("simd_flags") or [])
    lanes, lanes_source = _fp32_lanes(flags)
    if not cores or not mhz or not lanes:
        return None
    per_cycle = lanes * FMA_PIPES * 2
    how = f"{lanes} fp32 lanes ({lanes_source}) x {FMA_PIPES} FMA pipes (assumed) x 2"
    if precision == "bf16":
        if "amx_bf16" in flags:
            per_cycle, how = AMX_BF16_FLOP_PER_CYCLE, f"{AMX_BF16_FLOP_PER_CYCLE} FLOP (amx_bf16)"
        elif flags & {"avx512_bf16", "bf16"}:
            per_cycle, how = per_cycle * 2, f"{how} x 2 (bf16 pairs: {_bf16_flag(flags)})"
        else:
            how = f"{how} (no native bf16: computed in fp32)"
    tflops = cores * mhz * 1e6 * per_cycle / 1e12
    formula = f"{cores} cores x {mhz:,.0f} MHz ({clock_source}) x {how} = {tflops:.3f} TFLOP/s"
    return Peak(tflops, formula)


def _clock_mhz(cpu: dict[str, Any]) -> tuple[float | None, str]:
    if cpu.get("max_mhz"):
        return float(cpu["max_mhz"]), "max clock"
    if cpu.get("advertised_hz"):
        return cpu["advertised_hz"] / 1e6, "advertised clock; turbo can exceed it"
    return None, "unknown"


def _fp32_lanes(flags: set[str]) -> tuple[int | None, str]:
    if "avx512f" in flags:
        return 16, "avx512f"
    if {"avx2", "fma"} <= flags:
        return 8, "avx2+fma"
    if "asimd" in flags:
        return 4, "asimd"
    if "sse4_2" in flags:
        return 4, "sse4_2"
    return None, "no SIMD flag known"


def _bf16_flag(flags: set[str]) -> str:
    return "avx512_bf16" if "avx512_bf16" in flags else "bf16"
