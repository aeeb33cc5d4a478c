"""Replays of the distributed suite: facts and collective results from files, one pytest run each.

Runs are in-process (pytester.runpytest_inprocess) and read back from their junit XML; report
folders go to the test's temporary directory, not the checkout's reports/.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from junit_cases import outcomes_and_messages
from suite_replays import SUITES, SuiteRunner

SUITE = SUITES / "distributed"


@dataclass
class Run:
    ret: int
    outcomes: dict[str, str]  # test name -> passed / failed / skipped / error
    messages: dict[str, str]  # test name -> failure, error or skip text
    output: str

    def failed(self) -> dict[str, str]:
        return {n: self.messages[n] for n, o in self.outcomes.items() if o == "failed"}

    def describe(self) -> str:
        lines = [f"exit code {self.ret}"]
        lines += [
            f"{o.upper()} {n}: {self.messages.get(n, '')[:400]}" for n, o in self.outcomes.items()
        ]
        return "\n".join(lines) + "\n--- output ---\n" + self.output[-3000:]


@pytest.fixture
def run_suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    """run_suite(*pytest_args) -> Run, on suites/distributed."""
    monkeypatch.setenv("RIGCHECK_REPORT_DIR", str(pytester.path / "reports"))
    runner = SuiteRunner(pytester)

    def run(*args: str) -> Run:
        done = runner(SUITE, *args)
        return Run(done.ret, *outcomes_and_messages(done.cases), done.output)

    return run
