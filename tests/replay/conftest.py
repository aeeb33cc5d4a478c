"""Replay: the real suites run on facts snapshots, one pytest session per snapshot.

pytester comes from the project's addopts (`-p pytester`): a `pytest_plugins` here would
break `pytest tests`, since pytest only honours it in the root conftest.

Each replay runs in-process (pytester.runpytest_inprocess): a subprocess pays about a second
to import pytest's plugins again on every run, and the matrix has hundreds of runs. The
reports plugin is off unless asked for: it rewrites the certificate after every check, most of
a replay's time, and it judges nothing (tests/reports tests it). Outcomes are read from the
run's junit XML, test names as pytest reports them (parameters included).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from suite_replays import SUITES, SuiteRunner

# Checks that fail on a class's good snapshot for a defect outside the replay, with the defect.
# A replay expects them on top of a variant's failures and reports them as an xfail; an entry
# whose check passes again fails the replay, so each goes once its defect is fixed.
KNOWN_DEFECTS: dict[str, dict[str, str]] = {}


@dataclass
class Replay:
    """One run of the suites: its exit code, and what failed with which message."""

    ret: int
    failed: dict[str, str]  # test name -> failure message and text
    errors: dict[str, str]  # test name -> error (a crash in a fixture or a hook)
    output: str

    def describe(self) -> str:
        lines = [f"exit code {self.ret}"]
        lines += [f"FAILED {name}: {text[:400]}" for name, text in self.failed.items()]
        lines += [f"ERROR {name}: {text[:400]}" for name, text in self.errors.items()]
        return "\n".join(lines) + "\n--- output ---\n" + self.output[-3000:]


@pytest.fixture
def replay(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    """replay(snapshot, *pytest_args, reports=False) -> Replay; a dict is written to a file."""
    monkeypatch.setenv("RIGCHECK_REPORT_DIR", str(pytester.path / "reports"))
    runner = SuiteRunner(pytester)

    def run(snapshot: Path | dict[str, Any], *args: str, reports: bool = False) -> Replay:
        plugins = [] if reports else ["-p", "no:rigcheck.plugin.reports"]
        done = runner(SUITES, *args, *plugins, inputs={"--facts": snapshot})
        failed, errors = (
            {n: c.problems[tag] for n, c in done.cases.items() if tag in c.problems}
            for tag in ("failure", "error")
        )
        return Replay(done.ret, failed, errors, done.output)

    return run


@pytest.fixture
def known_defects():
    """known_defects(class) -> {test name: the defect that makes it fail on a good snapshot}."""
    return lambda name: KNOWN_DEFECTS.get(name, {})
