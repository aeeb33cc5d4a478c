"""The report tests' shared fixture: this machine's facts, recorded once."""

import subprocess
import sys
from pathlib import Path

import pytest
from suite_runs import run_suites


@pytest.fixture(scope="session")
def cpu_snapshot(tmp_path_factory) -> Path:
    """This machine's facts, recorded once; replaying them keeps each run to a few seconds."""
    path = tmp_path_factory.mktemp("facts") / "machine.json"
    cli = [sys.executable, "-m", "rigcheck", "facts", "-o", str(path)]
    subprocess.run(cli, check=True, capture_output=True, timeout=300)
    return path


@pytest.fixture(scope="session")
def cpu_run(tmp_path_factory, cpu_snapshot):
    """One finished cpu-class run, replayed on this machine's facts, into its own folder."""
    out = tmp_path_factory.mktemp("cpu-run") / "report"
    result = run_suites(out.parent, "-m", "cpu", f"--facts={cpu_snapshot}", f"--report-dir={out}")
    return result, out
