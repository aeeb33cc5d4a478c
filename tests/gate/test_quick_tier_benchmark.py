"""The cpu class's quick tier, live on this machine, as a benchmark (not a timed test): each
round is the whole `rigcheck check --tier quick cpu` command, interpreter start to verdict, and
pytest-benchmark reports its wall time (min/median/max; --benchmark-json keeps them). What the
test asserts is the verdict: a pass, so the tier ended inside its own 10 s budget (a run past it
ends INCOMPLETE, tests/gate/test_tiers.py). Runs in CI's serial pass (tests/conftest.py)."""

from __future__ import annotations

import itertools
import subprocess
import sys

from rigcheck.reports.certificate import load_certificate


def test_cpu_quick_tier_wall_time(benchmark, tmp_path):
    runs = itertools.count()
    verdicts = []

    def quick_tier() -> None:
        out = tmp_path / f"run{next(runs)}"
        done = subprocess.run(
            [sys.executable, "-m", "rigcheck", "check", "--tier", "quick", "cpu", "-q",
             f"--report-dir={out}"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        certificate = load_certificate(out)
        verdicts.append((certificate["verdict"], done.returncode, done.stdout[-2000:]))

    benchmark.pedantic(quick_tier, rounds=3, iterations=1)
    benchmark.extra_info["budget_s"] = 10
    assert [(v, rc) for v, rc, _ in verdicts] == [("pass", 0)] * 3, verdicts
