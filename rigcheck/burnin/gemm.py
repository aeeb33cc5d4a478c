"""The GEMM load on one device: back-to-back matmuls in the class's precision, in 1 s windows.

Every window records its TFLOP/s and the checksum of the same GEMM on the same inputs (every
CHECK_EVERY-th result, compared with the device's first on the device itself: one host read per
window). The inputs come from a seeded CPU generator, so every device of a model multiplies the
same numbers and, with deterministic kernels, must produce the same bits.
"""

from __future__ import annotations

import time
from typing import Any

DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}
SIZE = {"cuda": 8192, "cpu": 1024}  # 8192^3 keeps a GPU's tensor cores busy; 1024^3 a CPU's
WINDOW_S = 1.0
CHECK_EVERY = 4  # a checksum reads the output once: ~4% of a GEMM's time at 8192^2
SEED = 13


def inputs(torch: Any, n: int, dtype: Any, device: Any) -> tuple[Any, Any]:
    """The same two random matrices on every device: made on the CPU, then copied over."""
    gen = torch.Generator().manual_seed(SEED)
    a = torch.randn(n, n, generator=gen, dtype=torch.float32).to(dtype)
    b = torch.randn(n, n, generator=gen, dtype=torch.float32).to(dtype)
    return a.to(device), b.to(device)


def checksum(torch: Any, c: Any) -> Any:
    """The sum of the output's bit patterns as integers (on the device): any flipped bit shows."""
    bits = c.view(torch.int32) if c.element_size() == 4 else c.view(torch.int16)
    return bits.sum(dtype=torch.int64)


def gemm_phase(torch: Any, device: Any, precision: str, t0: float, until: float) -> dict:
    """Windows of GEMMs until `until` (time.monotonic()); the trace's windows columns."""
    dtype = getattr(torch, DTYPES[precision])
    n = SIZE["cpu" if device.type == "cpu" else "cuda"]
    a, b = inputs(torch, n, dtype, device)
    c = torch.empty(n, n, dtype=dtype, device=device)
    torch.mm(a, b, out=c)
    reference = checksum(torch, c).clone()
    windows: dict[str, list] = {
        k: [] for k in ("t_s", "tflops", "checksum", "checks", "mismatches")
    }
    _sync(torch, device)
    while time.monotonic() < until:
        start, done, checks = time.monotonic(), 0, 0
        mismatches = torch.zeros((), dtype=torch.int64, device=device)
        last = reference
        while time.monotonic() - start < WINDOW_S and time.monotonic() < until:
            torch.mm(a, b, out=c)
            done += 1
            if done % CHECK_EVERY == 0:
                last = checksum(torch, c)
                mismatches += last != reference
                checks += 1
                _sync(torch, device)  # keeps the host's clock and the device's work together
        _sync(torch, device)
        end = time.monotonic()
        windows["t_s"].append(round(end - t0, 3))
        windows["tflops"].append(round(2 * n**3 * done / (end - start) / 1e12, 4))
        windows["checksum"].append(int(last))
        windows["checks"].append(checks)
        windows["mismatches"].append(int(mismatches))
    return windows


def _sync(torch: Any, device: Any) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
