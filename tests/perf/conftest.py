"""Perf judging on CPU: the real suites/perf checks, run by pytester on synthetic GPU facts
with measurements injected through --replay-measurements, against a private spec directory
(RIGCHECK_EXPECTED_DIR) whose figures are known to the tests.

pytester comes from the project's addopts (`-p pytester`). Runs are in-process; outcomes and
recorded properties are read from the run's junit XML, warnings from its output.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from junit_cases import Case, outcomes_and_messages
from perf_inputs import BF16, COPY, UNKNOWN_FP8
from suite_replays import REPO, SUITES, SuiteRunner

PERF_SUITE = SUITES / "perf"


@dataclass
class Run:
    ret: int
    outcomes: dict[str, str]  # test name -> passed / failed / skipped
    messages: dict[str, str]  # test name -> failure or skip message
    properties: dict[str, dict[str, Any]]  # test name -> recorded user properties
    output: str
    warnings: list[str] = field(default_factory=list)

    def only(self, outcome: str) -> list[str]:
        return sorted(name for name, o in self.outcomes.items() if o == outcome)


@pytest.fixture
def spec_dir(tmp_path, monkeypatch) -> Path:
    """expected/ with cpu.json as committed and an h100.json with the figures above."""
    path = tmp_path / "expected"
    path.mkdir()
    h100 = json.loads((REPO / "expected" / "h100.json").read_text())
    h100["figures"] = {
        "matmul_bf16_tflops": BF16,
        "device_copy_gbps": COPY,
        "matmul_fp8_tflops": UNKNOWN_FP8,
    }
    (path / "h100.json").write_text(json.dumps(h100))
    (path / "cpu.json").write_text((REPO / "expected" / "cpu.json").read_text())
    monkeypatch.setenv("RIGCHECK_EXPECTED_DIR", str(path))
    monkeypatch.setenv("RIGCHECK_REPORT_DIR", str(tmp_path / "reports"))
    return path


@pytest.fixture
def perf_run(pytester: pytest.Pytester, spec_dir: Path):
    """perf_run(facts, replay, *args) -> Run: the perf suite on these facts and figures."""
    runner = SuiteRunner(pytester, "-o", "junit_family=xunit1", "-rA")

    def run(facts: dict | None, replay: dict | None, *args: str) -> Run:
        inputs = {"--facts": facts, "--replay-measurements": replay}
        done = runner(PERF_SUITE, *args, inputs=inputs)
        return Run(done.ret, *junit_results(done.cases), done.output, _warnings(done.output))

    return run


def junit_results(cases: dict[str, Case]):
    """(outcomes, messages, properties) of a run, properties parsed back into values."""
    outcomes, messages = outcomes_and_messages(cases)
    properties = {n: {k: _literal(v) for k, v in c.properties.items()} for n, c in cases.items()}
    return outcomes, messages, properties


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _warnings(output: str) -> list[str]:
    return [line for line in output.splitlines() if "Warning:" in line]
