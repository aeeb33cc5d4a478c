"""The report tests' shared run (cpu_snapshot: tests/conftest.py)."""

import pytest
from suite_runs import run_suites


@pytest.fixture(scope="session")
def cpu_run(tmp_path_factory, cpu_snapshot):
    """One finished cpu-class run, replayed on this machine's facts, into its own folder."""
    out = tmp_path_factory.mktemp("cpu-run") / "report"
    result = run_suites(out.parent, "-m", "cpu", f"--facts={cpu_snapshot}", f"--report-dir={out}")
    return result, out
