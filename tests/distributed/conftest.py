"""Replays of the distributed suite: facts and collective results from files, one pytest run each.

Runs are in-process (pytester.runpytest_inprocess) and read back from their junit XML; report
folders go to the test's temporary directory, not the checkout's reports/.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from junit_cases import outcomes_and_messages, read_junit

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "suites" / "distributed"


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
    count = iter(range(1_000_000))

    def run(*args: str) -> Run:
        junit = pytester.path / f"junit-{next(count)}.xml"
        result = pytester.runpytest_inprocess(
            *args,
            f"--junitxml={junit}",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(REPO),
            str(SUITE),
        )
        outcomes, messages = outcomes_and_messages(read_junit(junit))
        output = result.stdout.str() + "\n" + result.stderr.str()
        return Run(int(result.ret), outcomes, messages, output)

    return run
