"""Boundary self-tests: the real suites judge values just below, at and just above every limit
of every class, read from expected/*.json (a new class or limit is covered with no new code).

Runs are in-process (pytester) on the committed spec files; outcomes, messages and recorded
judgements come back from each run's junit XML.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

import pytest
from junit_cases import outcomes_and_messages
from suite_replays import SUITES, SuiteRunner


@dataclass
class Run:
    ret: int
    outcomes: dict[str, str]  # test name -> passed / failed / skipped / error
    messages: dict[str, str]  # test name -> failure, error or skip text
    judgements: dict[str, dict[str, Any]]  # test name -> its recorded rigcheck judgement
    output: str
    properties: dict[str, dict[str, Any]]  # test name -> every recorded property, as values

    def describe(self, names=None) -> str:
        names = names or self.outcomes
        lines = [f"exit code {self.ret}"]
        lines += [f"{self.outcomes[n]} {n}: {self.messages.get(n, '')[:300]}" for n in names]
        return "\n".join(lines) + "\n--- output ---\n" + self.output[-2000:]


@pytest.fixture
def run_suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    """run_suite(suite, *args, facts=dict, replay=dict, collectives=dict) -> Run."""
    monkeypatch.setenv("RIGCHECK_REPORT_DIR", str(pytester.path / "reports"))
    runner = SuiteRunner(pytester, "-o", "junit_family=xunit1")

    def run(suite: str, *args: str, facts=None, replay=None, collectives=None) -> Run:
        inputs = {"--facts": facts, "--replay-measurements": replay, "--collectives": collectives}
        done = runner(SUITES / suite, *args, inputs=inputs)
        outcomes, messages = outcomes_and_messages(done.cases)
        judgements = {
            name: ast.literal_eval(case.properties["rigcheck"])
            for name, case in done.cases.items()
            if "rigcheck" in case.properties
        }
        properties = {
            name: {k: _value(v) for k, v in case.properties.items()}
            for name, case in done.cases.items()
        }
        return Run(done.ret, outcomes, messages, judgements, done.output, properties)

    return run


def _value(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
