"""Burn-in self-tests: the real suites/burnin checks run on traces, one pytest session each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from burnin_runs import SNAPSHOT
from junit_cases import Case
from suite_replays import SUITES, SuiteRunner


@pytest.fixture
def judge_trace(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    """judge_trace(trace, *args, gpus=4) -> {check name: Case}: suites/burnin on one trace."""
    monkeypatch.setenv("RIGCHECK_REPORT_DIR", str(pytester.path / "reports"))
    runner = SuiteRunner(pytester, "-p", "no:rigcheck.plugin.reports")

    def run(trace: dict[str, Any] | Path, *args: str, gpus: int = 4, klass: str = "h100"):
        done = runner(
            SUITES,
            "-m",
            f"{klass} and burn_in",
            f"--facts={SNAPSHOT}",
            f"--gpus={gpus}",
            *args,
            inputs={"--burn-in-trace": trace},
        )
        cases: dict[str, Case] = done.cases
        return done.result, cases

    return run
