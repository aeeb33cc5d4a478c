"""The cpu class's quick tier, live on this machine, as a benchmark (not a timed test): each
round is the whole `rigcheck check --tier quick cpu` command, interpreter start to verdict, and
pytest-benchmark reports its wall time (min/median/max; --benchmark-json keeps them). What the
test asserts is the verdict: a pass, so the tier ended inside its own 10 s budget (a run past it
ends INCOMPLETE, tests/gate/test_tiers.py). Runs in CI's serial pass (tests/conftest.py).

The budget is wall time, and CI's 2 cores are shared: with other jobs running (load average
6.8-8) two rounds took 20-24 s and ran out of budget (2026-11-25), where a round at nice -15 on
the same box passed in 8.8 s. A round that ran out while the load average was over twice the
cores was crowded out, not slow: its INCOMPLETE is accepted (and warned about) when it names the
budget. A round that ran out on a quieter machine fails; when every round was crowded out there
is nothing to judge, and the test says so as a skip."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import warnings

import pytest

from rigcheck.reports.certificate import load_certificate

BUDGET_S = 10
CROWDED = 2  # load average per core over which a round was crowded out by other jobs


def test_cpu_quick_tier_wall_time(benchmark, tmp_path):
    runs = itertools.count()
    rounds = []

    def quick_tier() -> None:
        out = tmp_path / f"run{next(runs)}"
        load = os.getloadavg()[0]
        done = subprocess.run(
            [sys.executable, "-m", "rigcheck", "check", "--tier", "quick", "cpu", "-q",
             f"--report-dir={out}"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        per_core = max(load, os.getloadavg()[0]) / (os.cpu_count() or 1)
        rounds.append((load_certificate(out), done.returncode, per_core, done.stdout[-2000:]))

    benchmark.pedantic(quick_tier, rounds=3, iterations=1)
    benchmark.extra_info["budget_s"] = BUDGET_S
    judged = []
    for certificate, returncode, per_core, _ in rounds:
        if crowded_out(certificate, returncode, per_core):
            reason = certificate["partial_reason"]
            warnings.warn(f"load {per_core:.1f} per core: {reason}", stacklevel=1)
        else:
            judged.append((certificate["verdict"], returncode))
    shown = [(c["verdict"], rc, round(load, 1), out) for c, rc, load, out in rounds]
    assert judged == [("pass", 0)] * len(judged), shown
    if not judged:
        loads = [round(load, 1) for _, _, load, _ in rounds]
        pytest.skip(f"every round ran out of budget on a crowded machine (load {loads} per core)")


def crowded_out(certificate: dict, returncode: int, per_core: float) -> bool:
    """An INCOMPLETE round for its budget, with the load average over CROWDED per core."""
    reason = certificate.get("partial_reason") or ""
    return (
        certificate["verdict"] == "incomplete"
        and returncode == 2
        and f"its {BUDGET_S} s time budget ran out" in reason
        and per_core > CROWDED
    )
