"""Timing device work correctly: one Timer for CUDA, ROCm, MPS and the CPU.

Device work is asynchronous, so a round of calls ends with a synchronize inside the timed
region (torch.cuda.synchronize for CUDA and ROCm, torch.mps.synchronize for MPS; the CPU
needs none), and the next round starts with the device idle. The host clock is
time.perf_counter, pytest-benchmark's own timer: the figure is computed from exactly the
numbers pytest-benchmark stores.

- Warm-up: the calibration call (module load, kernel selection, handle creation) and
  explicit warm-up rounds are never counted.
- Enough work per round: calls per round are calibrated so a round lasts `round_s`, so
  launch and synchronize overhead stay far below 1%.
- Repeats: several rounds; the figure comes from the median, the best from the fastest.
- Storage: the headline timing of a check runs through benchmark.pedantic with
  iterations = calls per round, so pytest-benchmark stores seconds per call, comparable
  between runs whatever the calibration chose. (pytest-benchmark allows no `setup` with
  iterations > 1: outputs are poisoned before the rounds and checked after them instead.)
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Plan:
    """How one timing runs: rounds, warm-up rounds, and the work per round."""

    rounds: int
    warmup_rounds: int = 1
    round_s: float = 0.025  # seconds of device work per round (calls are calibrated to it)
    max_calls: int = 1000


@dataclass
class Timing:
    per_call_s: list[float]  # one sample per round: seconds per call
    calls_per_round: int
    stored: bool  # whether pytest-benchmark stored these rounds


def synchronizer(device) -> Callable[[], None]:
    """The call that waits until `device` has finished its queued work."""
    import torch

    if device.type == "cuda":  # ROCm builds of torch use the cuda device type too
        return lambda: torch.cuda.synchronize(device)
    if device.type == "mps":
        return torch.mps.synchronize
    return lambda: None


class SyncEvery:
    """A call that synchronizes after every n-th invocation.

    pytest-benchmark's pedantic(iterations=n) times n invocations between two clock reads;
    the n-th one waits for the device, so the timed region holds exactly n calls of work.
    """

    def __init__(self, call: Callable[[], Any], sync: Callable[[], None], n: int):
        self.call, self.sync, self.n, self.count = call, sync, n, 0

    def __call__(self) -> None:
        self.call()
        self.count += 1
        if self.count % self.n == 0:
            self.sync()


class Timer:
    """Times calls on one torch device; the first headline timing goes to pytest-benchmark."""

    def __init__(self, device, benchmark: Any = None):
        self.device = device
        self.sync = synchronizer(device)
        enabled = benchmark is not None and getattr(benchmark, "enabled", False)
        self._benchmark = benchmark if enabled else None

    def calls_per_round(self, call: Callable[[], Any], plan: Plan) -> int:
        """Warm the call up once, then size a round to `plan.round_s` of work."""
        call()
        self.sync()
        start = time.perf_counter()
        call()
        self.sync()
        one = max(time.perf_counter() - start, 1e-7)
        return max(1, min(plan.max_calls, math.ceil(plan.round_s / one)))

    def time(self, call: Callable[[], Any], plan: Plan, *, headline: bool = False) -> Timing:
        """Seconds per call, one sample per round; `headline` stores the rounds (once a test)."""
        n = self.calls_per_round(call, plan)
        self.sync()
        if headline and self._benchmark is not None:
            benchmark, self._benchmark = self._benchmark, None  # pedantic runs once per test
            benchmark.pedantic(
                SyncEvery(call, self.sync, n),
                rounds=plan.rounds,
                warmup_rounds=plan.warmup_rounds,
                iterations=n,
            )
            self.sync()  # pedantic makes one more, unsynchronized, call for its result
            return Timing(list(benchmark.stats.stats.data), n, stored=True)
        return Timing(self._rounds(call, n, plan), n, stored=False)

    def _rounds(self, call: Callable[[], Any], n: int, plan: Plan) -> list[float]:
        samples = []
        for i in range(plan.warmup_rounds + plan.rounds):
            start = time.perf_counter()
            for _ in range(n):
                call()
            self.sync()
            if i >= plan.warmup_rounds:
                samples.append((time.perf_counter() - start) / n)
        return samples


def random_floats(numel: int, device, dtype=None):
    """Random values, never zeros (zeros can run faster than real data and hide unwritten output).

    On the CPU, drawing a few hundred MiB of random numbers takes seconds: a 4 MiB random block
    is tiled instead, which moves the same bytes.
    """
    import torch

    dtype = dtype or torch.float32
    if device.type != "cpu":
        return torch.rand(numel, device=device, dtype=torch.float32).add_(0.5).to(dtype)
    block = torch.rand(min(numel, 2**20), dtype=torch.float32).add_(0.5).to(dtype)
    return block.repeat(math.ceil(numel / block.numel()))[:numel].contiguous()
