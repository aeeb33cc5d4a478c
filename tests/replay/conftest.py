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

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from junit_cases import read_junit

REPO = Path(__file__).resolve().parents[2]
SUITES = REPO / "suites"

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
    runs = iter(range(1_000_000))

    def run(snapshot: Path | dict[str, Any], *args: str, reports: bool = False) -> Replay:
        n = next(runs)
        if isinstance(snapshot, dict):
            path = pytester.path / f"facts-{n}.json"
            path.write_text(json.dumps(snapshot))
            snapshot = path
        junit = pytester.path / f"junit-{n}.xml"
        result = pytester.runpytest_inprocess(
            *args,
            f"--facts={snapshot}",  # one token: a separate path would be read as a test path
            f"--junitxml={junit}",
            *([] if reports else ["-p", "no:rigcheck.reports.plugin"]),
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(REPO),
            str(SUITES),
        )
        cases = read_junit(junit)
        failed, errors = (
            {n: c.problems[tag] for n, c in cases.items() if tag in c.problems}
            for tag in ("failure", "error")
        )
        output = result.stdout.str() + "\n" + result.stderr.str()
        return Replay(int(result.ret), failed, errors, output)

    return run


@pytest.fixture
def known_defects():
    """known_defects(class) -> {test name: the defect that makes it fail on a good snapshot}."""
    return lambda name: KNOWN_DEFECTS.get(name, {})
