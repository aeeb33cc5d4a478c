"""Attention throughput: torch SDPA on its flash backend, and flash-attn's own kernel.

FLOPs counted (the standard count, as FlashAttention's papers and benchmarks use):
4 * batch * heads * seq_q * seq_k * head_dim for a non-causal forward pass, the two matmuls
Q@K^T and P@V; softmax and scaling are not counted. Forward only, bf16 (fp16 where the class
has no native bf16), batch 8, 16 heads, sequence 4096, head dim 128.
"""

from __future__ import annotations

import math

from rigcheck.measure.device import MeasuredDevice
from rigcheck.measure.measurement import Measurement, rates
from rigcheck.measure.timing import Plan, Timer

BATCH, HEADS, SEQ, HEAD_DIM = 8, 16, 4096, 128
PLAN = Plan(rounds=10, warmup_rounds=2, round_s=0.025)
CHECK_ROWS = 256  # query rows compared with the float64 reference
TOLERANCE = 2e-2  # ||out - ref|| / ||ref|| for half-precision attention against float64


def attention_sdpa_tflops(device: MeasuredDevice, timer: Timer, half: str) -> Measurement:
    """F.scaled_dot_product_attention forced onto its flash backend: no silent fallback."""
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q, k, v = _qkv(timer.device, half, layout="bhsd")
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        sdpa = torch.nn.functional.scaled_dot_product_attention
        holder = {}
        timing = timer.time(lambda: holder.update(out=sdpa(q, k, v)), PLAN, headline=True)
    error = _check(q[0, 0], k[0, 0], v[0, 0], holder["out"][0, 0])
    return _measurement("attention_sdpa_tflops", device, timing, error, "torch SDPA, flash", half)


def attention_flash_attn_tflops(device: MeasuredDevice, timer: Timer, half: str) -> Measurement:
    """flash-attn's flash_attn_func (its layout is batch, seq, heads, head_dim)."""
    from flash_attn import flash_attn_func

    q, k, v = _qkv(timer.device, half, layout="bshd")
    holder = {}
    timing = timer.time(lambda: holder.update(out=flash_attn_func(q, k, v)), PLAN, headline=True)
    out = holder["out"]
    error = _check(q[0, :, 0], k[0, :, 0], v[0, :, 0], out[0, :, 0])
    return _measurement(
        "attention_flash_attn_tflops", device, timing, error, "flash-attn flash_attn_func", half
    )


def attention_tflop() -> float:
    return 4 * BATCH * HEADS * SEQ * SEQ * HEAD_DIM / 1e12


def _qkv(device, half: str, layout: str):
    import torch

    dtype = torch.bfloat16 if half == "bf16" else torch.float16
    shape = (BATCH, HEADS, SEQ, HEAD_DIM) if layout == "bhsd" else (BATCH, SEQ, HEADS, HEAD_DIM)
    return tuple(torch.randn(shape, device=device, dtype=dtype) for _ in range(3))


def _check(q, k, v, out) -> float:
    """The first rows of one head against float64 math attention on the CPU."""
    q, out = q[:CHECK_ROWS], out[:CHECK_ROWS]
    q, k, v, out = (t.float().cpu().double() for t in (q, k, v, out))
    ref = ((q @ k.T) / math.sqrt(q.shape[-1])).softmax(dim=-1) @ v
    error = ((out - ref).norm() / ref.norm()).item()
    if not error <= TOLERANCE:
        raise AssertionError(
            f"attention gives wrong results: relative error {error:.2e} against float64 "
            f"(tolerance {TOLERANCE:.0e})"
        )
    return error


def _measurement(key, device, timing, error, kernel, half) -> Measurement:
    median, best = rates(attention_tflop(), timing.per_call_s)
    return Measurement(
        key=key,
        device=device.label,
        value=median,
        best=best,
        unit="TFLOP/s",
        definition=f"4*b*h*s_q*s_k*d / median time, forward, non-causal, {kernel}, {half}, "
        f"b={BATCH} h={HEADS} s={SEQ} d={HEAD_DIM}",
        samples_s=timing.per_call_s,
        details={
            "batch": BATCH,
            "heads": HEADS,
            "seq": SEQ,
            "head_dim": HEAD_DIM,
            "dtype": half,
            "calls_per_round": timing.calls_per_round,
            "relative_error": error,
            "stored_by_pytest_benchmark": timing.stored,
        },
    )
