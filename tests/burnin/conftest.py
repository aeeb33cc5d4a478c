"""Burn-in self-tests: the real suites/burnin checks run on traces, one pytest session each."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from burnin_runs import REPO, SNAPSHOT
from junit_cases import Case, read_junit


@pytest.fixture
def judge_trace(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    """judge_trace(trace, *args, gpus=4) -> {check name: Case}: suites/burnin on one trace."""
    monkeypatch.setenv("RIGCHECK_REPORT_DIR", str(pytester.path / "reports"))
    runs = iter(range(1_000_000))

    def run(trace: dict[str, Any] | Path, *args: str, gpus: int = 4, klass: str = "h100"):
        n = next(runs)
        if isinstance(trace, dict):
            path = pytester.path / f"trace-{n}.json"
            path.write_text(json.dumps(trace))
            trace = path
        junit = pytester.path / f"junit-{n}.xml"
        result = pytester.runpytest_inprocess(
            "-m",
            f"{klass} and burn_in",
            f"--facts={SNAPSHOT}",
            f"--gpus={gpus}",
            f"--burn-in-trace={trace}",
            f"--junitxml={junit}",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:rigcheck.reports.plugin",
            "--rootdir",
            str(REPO),
            *args,
            str(REPO / "suites"),
        )
        cases: dict[str, Case] = read_junit(junit)
        return result, cases

    return run
