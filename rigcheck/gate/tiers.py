"""The three tiers of `rigcheck check --tier`: which suite areas each runs, and its time budget.

Data, not code paths: a tier is a set of area markers (rigcheck.plugin's SUITE_MARKERS and the
burn-in's), a budget in seconds counted from the tier's first check, and, for acceptance, the
burn-in it turns on when none is given. docs/gate.md says what each one catches and cannot.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

from rigcheck.number_text import plain_float


@dataclass(frozen=True)
class Tier:
    name: str
    budget_s: float  # wall time from the first check; what is not done by then is INCOMPLETE
    areas: frozenset[str]  # the area markers whose checks run
    burn_in_s: float | None = None  # the burn-in it adds when --burn-in is not given


# quick: the prolog / HealthCheckProgram tier (Slurm kills that program at 60 s).
# standard: plus the timed measurements. acceptance: plus the torchrun job and a burn-in.
QUICK = Tier("quick", 10.0, frozenset({"facts"}))
STANDARD = Tier("standard", 120.0, frozenset({"facts", "perf", "memory"}))
ACCEPTANCE = Tier(
    "acceptance",
    600.0,
    frozenset({"facts", "perf", "memory", "distributed", "burn_in"}),
    burn_in_s=300.0,
)
TIERS = {t.name: t for t in (QUICK, STANDARD, ACCEPTANCE)}


def parse_tier(text: str) -> Tier:
    """An argparse / pytest option type: the Tier named, or a usage error listing them."""
    try:
        return TIERS[text]
    except KeyError:
        names = ", ".join(TIERS)
        raise argparse.ArgumentTypeError(f"unknown tier {text!r}: choose one of {names}") from None


def seconds(text: str) -> float:
    """An argparse / pytest option type for a time (a budget, a timeout): a finite number of
    seconds above 0, else a usage error saying so. float() alone takes 'nan', 'inf' and 0, which
    made every check fail at once, or a timeout kill the run, and the gate drain the node."""
    try:
        value = plain_float(text)  # '１０' is a typo, not ten seconds
    except (TypeError, ValueError):
        value = math.nan
    if not (math.isfinite(value) and 0 < value <= MOST_SECONDS):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a time: give a finite number of seconds above 0 and at most "
            f"{MOST_SECONDS:,} (a week), e.g. 30"
        )
    return value


# Beyond any gate's wait; and 1e30 overflowed the clock of subprocess's own timeout, a
# traceback that left the prolog without a verdict.
MOST_SECONDS = 7 * 24 * 3600


def tier_of(certificate: dict) -> str | None:
    """The tier a finished run named (`--tier NAME` or `--tier=NAME` in its arguments), or None
    for a run of the whole class. The certificate has no field of its own for it."""
    args = (certificate.get("run") or {}).get("args") or []
    for i, arg in enumerate(args):
        if arg.startswith("--tier="):
            return arg.split("=", 1)[1]
        if arg == "--tier" and i + 1 < len(args):
            return args[i + 1]
    return None


def in_tier(tier: Tier, markers: set[str]) -> bool:
    """Whether a check carrying these marker names runs in the tier: one of its areas."""
    return bool(tier.areas & markers)
