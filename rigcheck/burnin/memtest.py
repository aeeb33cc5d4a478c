"""The memory pattern test: write most of the free memory, read it back, compare on the device.

Two kinds of pass alternate until the phase ends (at least one of each): walking ones (word i
holds 1 << ((i + k) % 32): every bit of every word set alone, shifted each pass) and random words
from a seeded generator (regenerated to compare). The whole buffer is written before any of it
is read back, so each word sits in memory while the rest is written. Mismatches are counted on
the device; the first is located only when there is one, so a clean pass costs no extra reads.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

CHUNK_WORDS = 1 << 24  # 64 MiB of int32: a multiple of 32, so walking ones repeat per chunk
MASK = 0xFFFFFFFF


def pattern_test(buf: Any, until: float, corrupt: Callable[[Any], None] | None = None) -> dict:
    """Passes over `buf` (int32, 1-D) until `until` (time.monotonic()); the trace's memory_test.

    `corrupt` is a seam for the self-tests: called between writing and reading back.
    """
    import torch

    passes, errors, first = [], 0, None
    k, last_pass_s = 0, 0.0
    # At least one pass of each kind; after that, no pass that would run past the phase's end.
    while k < 2 or time.monotonic() + last_pass_s < until:
        begun = time.monotonic()
        kind = "walking_ones" if k % 2 == 0 else "random"
        name = f"{kind}:{k // 2}"
        walking = _walking(torch, k // 2, buf) if kind == "walking_ones" else None
        for chunk, start in _chunks(buf):
            chunk.copy_(_expected(torch, walking, k // 2, start, chunk))
        if corrupt is not None:
            corrupt(buf)
        bad = torch.zeros((), dtype=torch.int64, device=buf.device)
        for chunk, start in _chunks(buf):
            bad += (chunk != _expected(torch, walking, k // 2, start, chunk)).sum()
        found = int(bad)  # one host read per pass
        if found and first is None:
            first = _first_error(torch, buf, walking, k // 2, name)
        errors += found
        passes.append(name)
        k += 1
        last_pass_s = time.monotonic() - begun
    return {
        "bytes_tested": buf.numel() * 4,
        "passes": passes,
        "errors": errors,
        "first_error": first,
    }


def _chunks(buf: Any):
    for start in range(0, buf.numel(), CHUNK_WORDS):
        yield buf[start : start + CHUNK_WORDS], start


def _walking(torch: Any, n: int, buf: Any) -> Any:
    """One chunk of walking ones for pass n; every chunk starts at a multiple of 32 words."""
    size = min(CHUNK_WORDS, buf.numel())
    shifts = (torch.arange(size, device=buf.device, dtype=torch.int64) + n) % 32
    return torch.bitwise_left_shift(torch.ones_like(shifts), shifts).to(torch.int32)


def _expected(torch: Any, walking: Any, n: int, start: int, chunk: Any) -> Any:
    size, device = chunk.numel(), chunk.device
    if walking is not None:
        return walking[:size]
    gen = torch.Generator(device=device).manual_seed(1_000_003 * n + start)
    return torch.randint(-(2**31), 2**31, (size,), generator=gen, dtype=torch.int32, device=device)


def _first_error(torch: Any, buf: Any, walking: Any, n: int, name: str) -> dict[str, Any]:
    for chunk, start in _chunks(buf):
        want = _expected(torch, walking, n, start, chunk)
        wrong = (chunk != want).nonzero()
        if wrong.numel():
            i = int(wrong[0])
            return {
                "pattern": name,
                "offset_bytes": (start + i) * 4,
                "expected": int(want[i]) & MASK,
                "found": int(chunk[i]) & MASK,
            }
    return {"pattern": name, "offset_bytes": -1, "expected": 0, "found": 0}  # flipped back
