"""Which rank is slow: each rank's own work per step against the other ranks', with noise bounds.

A rank is slow when its median step work exceeds the median of the OTHER ranks' medians by more
than MIN_EXCESS of it and by more than Z standard errors of the two medians (each from its steps'
spread, MAD-scaled). Leaving the rank out of its own reference keeps one straggler in a 2- or
3-rank job from dragging the reference towards itself.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from rigcheck.blame.step_reader import RankSteps

MIN_EXCESS = 0.10  # slower than the others by 10 %: below that, not worth a machine's drain
Z = 4.0  # standard errors: a clean job has many ranks and steps, and must blame none
WARMUP_STEPS = 2  # compile, allocator and first-touch steps are slow on every rank
MIN_STEPS = 5


@dataclass(frozen=True)
class SlowRank:
    rank: int
    median_s: float
    others_s: float
    excess: float  # fraction over the others' median
    steps: int
    measure: str  # "compute_s" or "step_s"

    @property
    def evidence(self) -> str:
        return (
            f"rank {self.rank}'s {self.measure} median {self.median_s * 1e3:.1f} ms vs "
            f"{self.others_s * 1e3:.1f} ms on the other ranks (+{self.excess:.0%}, "
            f"{self.steps} steps)"
        )


def measure_of(ranks: dict[int, RankSteps]) -> str:
    """compute_s when every rank logged it; else step_s, which a synchronous job evens out."""
    every = all(r.times("compute_s") for r in ranks.values())
    return "compute_s" if every else "step_s"


def slow_ranks(
    ranks: dict[int, RankSteps], min_excess: float = MIN_EXCESS, z: float = Z
) -> list[SlowRank]:
    """The slow ranks, slowest first; [] for a clean job or one too short to judge."""
    if len(ranks) < 2:
        return []
    measure = measure_of(ranks)
    series = {r: steps.times(measure)[WARMUP_STEPS:] for r, steps in ranks.items()}
    if any(len(s) < MIN_STEPS for s in series.values()):
        return []
    medians = {r: statistics.median(s) for r, s in series.items()}
    errors = {r: median_error(s) for r, s in series.items()}
    found = []
    for rank, median in medians.items():
        others = [r for r in medians if r != rank]
        reference = statistics.median(medians[r] for r in others)
        noise = math.hypot(errors[rank], statistics.median(errors[r] for r in others))
        excess = median - reference
        if reference > 0 and excess > min_excess * reference and excess > z * noise:
            found.append(
                SlowRank(rank, median, reference, excess / reference, len(series[rank]), measure)
            )
    return sorted(found, key=lambda s: -s.excess)


def median_error(values: list[float]) -> float:
    """Standard error of a median, from the MAD (robust to the odd long step)."""
    center = statistics.median(values)
    sigma = 1.4826 * statistics.median(abs(v - center) for v in values)
    return 1.2533 * sigma / math.sqrt(len(values))
