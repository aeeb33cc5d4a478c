"""Boundary self-tests: the real suites judge values just below, at and just above every limit
of every class, read from expected/*.json (a new class or limit is covered with no new code).

Runs are in-process (pytester) on the committed spec files; outcomes, messages and recorded
judgements come back from each run's junit XML.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from junit_cases import outcomes_and_messages, read_junit

REPO = Path(__file__).resolve().parents[2]


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
    count = iter(range(1_000_000))

    def run(suite: str, *args: str, facts=None, replay=None, collectives=None) -> Run:
        n = next(count)
        options = []
        for option, data in (
            ("--facts", facts),
            ("--replay-measurements", replay),
            ("--collectives", collectives),
        ):
            if data is not None:
                path = pytester.path / f"{option.strip('-')}-{n}.json"
                path.write_text(json.dumps(data))
                options.append(f"{option}={path}")  # one token: a separate path reads as a test
        junit = pytester.path / f"junit-{n}.xml"
        result = pytester.runpytest_inprocess(
            *options,
            *args,
            f"--junitxml={junit}",
            "-o",
            "junit_family=xunit1",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(REPO),
            str(REPO / "suites" / suite),
        )
        cases = read_junit(junit)
        outcomes, messages = outcomes_and_messages(cases)
        judgements = {
            name: ast.literal_eval(case.properties["rigcheck"])
            for name, case in cases.items()
            if "rigcheck" in case.properties
        }
        output = result.stdout.str() + "\n" + result.stderr.str()
        properties = {
            name: {k: _value(v) for k, v in case.properties.items()} for name, case in cases.items()
        }
        return Run(int(result.ret), outcomes, messages, judgements, output, properties)

    return run


def _value(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
