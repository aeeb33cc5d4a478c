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


# The most one figure may take, set-up and calibration included (issue 38): sizes and calls are
# chosen to fit, and a figure that cannot is INCOMPLETE. A CPU figure takes a few seconds on an
# idle host; the cap is a ceiling for a loaded one (this project's 2-core VM at load 5-8 spent
# 8.5 s just filling the memory test's 2 x 256 MiB, 2026-11-29). An accelerator's first call
# can include library loading and kernel selection.
CAP_S = {"cpu": 30.0}
ACCELERATOR_CAP_S = 60.0


def cap_s(backend: str) -> float:
    return CAP_S.get(backend, ACCELERATOR_CAP_S)


class MeasurementIncomplete(Exception):
    """A measurement that cannot finish within its time cap: neither a pass nor a fault."""


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

    def __init__(
        self,
        device,
        benchmark: Any = None,
        cap_s: float | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ):
        self.device = device
        self.sync = synchronizer(device)
        enabled = benchmark is not None and getattr(benchmark, "enabled", False)
        self._benchmark = benchmark if enabled else None
        self.cap_s, self.clock = cap_s, clock
        self.ends_at = None if cap_s is None else clock() + cap_s

    def remaining_s(self) -> float:
        return math.inf if self.ends_at is None else self.ends_at - self.clock()

    def calls_per_round(self, call: Callable[[], Any], plan: Plan, share: float = 0.5) -> int:
        """Warm the call up once, then size a round to `plan.round_s` of work, and at most
        `share` of the time left under the cap for all the rounds (the rest is for what follows:
        the judged timing after a sweep)."""
        call()
        self.sync()
        start = self.clock()
        call()
        self.sync()
        one = max(self.clock() - start, 1e-7)
        n = max(1, min(plan.max_calls, math.ceil(plan.round_s / one)))
        rounds = plan.warmup_rounds + plan.rounds
        left = self.remaining_s()
        if rounds * one > left:
            raise MeasurementIncomplete(
                f"one call takes {one:.3g} s, so {rounds} rounds need {rounds * one:.1f} s, "
                f"more than the {max(left, 0):.1f} s left of the {self.cap_s:g} s cap"
            )
        if self.ends_at is None:
            return n
        return min(n, max(1, math.floor(left * share / (rounds * one))))

    def time(self, call: Callable[[], Any], plan: Plan, *, headline: bool = False) -> Timing:
        """Seconds per call, one sample per round; `headline` stores the rounds (once a test)."""
        n = self.calls_per_round(call, plan, share=1.0 if headline else 0.5)
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
