"""Device memory bandwidth: a large device-to-device copy and a STREAM-like triad.

Both run on the SMs (elementwise kernels), as the SM-kernel stream benchmarks the spec's
achievable figures come from (te42kyfo/gpu-benches gpu-stream, STREAM). The copy is STREAM's
'scale', dst = 1.2 x src as one torch.mul(out=): a plain dst.copy_(src) of contiguous tensors
goes to cudaMemcpyAsync (aten/src/ATen/native/cuda/Copy.cu), the copy engine, which on HBM3e
parts is far slower than the SMs (NVIDIA/nvbandwidth#48) and so measures another thing.

Both count every byte that crosses the memory bus once: a copy of N bytes reads N and writes N
(2N counted), the triad a = b + s*c reads 2N and writes N (3N counted). nvbandwidth's
device_local_copy and DCGM count the same way; datasheets quote the bus's total, so the ratio
to the datasheet is like for like. Buffers are far larger than any cache (1 GiB on
accelerators, 256 MiB on the CPU), at a fixed size: a size sweep's average would be
meaningless as a floor.
"""

from __future__ import annotations

from rigcheck.measure.device import MeasuredDevice
from rigcheck.measure.measurement import Measurement, rates
from rigcheck.measure.timing import Plan, Timer, random_floats

MIB = 2**20
BUFFER_BYTES = {"cuda": 1024 * MIB, "rocm": 1024 * MIB, "mps": 1024 * MIB, "cpu": 256 * MIB}
PLANS = {
    "cpu": Plan(rounds=5, warmup_rounds=1, round_s=0.15),
    "mps": Plan(rounds=10, warmup_rounds=2, round_s=0.05),
}
GPU_PLAN = Plan(rounds=10, warmup_rounds=2, round_s=0.025)
TRIAD_SCALAR = 3.0
SCALE = 1.2  # STREAM's and gpu-stream's 'scale' factor


def device_copy_gbps(device: MeasuredDevice, timer: Timer) -> Measurement:
    """dst = 1.2 x src on the SMs (STREAM 'scale'): bytes read plus bytes written, per second."""
    import torch

    nbytes = BUFFER_BYTES[device.backend]
    src = random_floats(nbytes // 4, timer.device)
    dst = torch.full_like(src, float("nan"))
    plan = PLANS.get(device.backend, GPU_PLAN)
    timing = timer.time(lambda: scale_copy(src, dst), plan, headline=True)
    _check_written(torch.allclose(dst[-1024:], SCALE * src[-1024:]), "copy")
    median, best = rates(2 * nbytes / 1e9, timing.per_call_s)
    return Measurement(
        key="device_copy_gbps",
        device=device.label,
        value=median,
        best=best,
        unit="GB/s",
        definition=f"2 x {nbytes // MIB} MiB (read + write) / median time of dst = {SCALE:g} x src "
        "(torch.mul out=dst, an elementwise SM kernel, not the copy engine), float32, "
        "GB = 10^9 bytes",
        samples_s=timing.per_call_s,
        details=_details(nbytes, 2, timing),
    )


def scale_copy(src, dst) -> None:
    """One elementwise kernel (aten/src/ATen/native/cuda/BinaryMulKernel.cu): reads src once,
    writes dst once, like a copy, but on the SMs rather than through cudaMemcpyAsync."""
    import torch

    torch.mul(src, SCALE, out=dst)


def device_triad_gbps(device: MeasuredDevice, timer: Timer) -> Measurement:
    """STREAM triad a = b + s*c (one fused torch.add): 2 reads and 1 write per element."""
    import torch

    nbytes = BUFFER_BYTES[device.backend]
    b = random_floats(nbytes // 4, timer.device)
    c = random_floats(nbytes // 4, timer.device)
    a = torch.full_like(b, float("nan"))
    plan = PLANS.get(device.backend, GPU_PLAN)
    timing = timer.time(lambda: torch.add(b, c, alpha=TRIAD_SCALAR, out=a), plan, headline=True)
    expected = b[-1024:] + TRIAD_SCALAR * c[-1024:]
    _check_written(torch.allclose(a[-1024:], expected), "triad")
    median, best = rates(3 * nbytes / 1e9, timing.per_call_s)
    return Measurement(
        key="device_triad_gbps",
        device=device.label,
        value=median,
        best=best,
        unit="GB/s",
        definition=f"3 x {nbytes // MIB} MiB (2 read + 1 written) / median time of "
        f"a = b + {TRIAD_SCALAR:g}*c (torch.add alpha=, out=a), float32, GB = 10^9 bytes",
        samples_s=timing.per_call_s,
        details=_details(nbytes, 3, timing),
    )


def _details(nbytes: int, passes: int, timing) -> dict:
    return {
        "buffer_bytes": nbytes,
        "bytes_counted_per_call": passes * nbytes,
        "calls_per_round": timing.calls_per_round,
        "stored_by_pytest_benchmark": timing.stored,
    }


def _check_written(ok: bool, what: str) -> None:
    if not ok:
        raise AssertionError(f"the {what} did not write the expected values into its output")
