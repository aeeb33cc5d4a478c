"""Issue 24: a verdict says what was judged. A run that measured nothing says so in its verdict
line and certificate; a second run in a folder where one is under way waits for it (a lock),
so neither measures the other's load.
"""

from __future__ import annotations

import json
from pathlib import Path

from rigcheck.plugin.session import ReportSession
from rigcheck.reports.certificate import measured_count
from rigcheck.reports.run_lock import LOCK_NAME, hold

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = ROOT / "fixtures" / "snapshots" / "cpu.json"
RECORDED = ROOT / "fixtures" / "measurements" / "cpu-ci-recorded.json"
SUITES = str(ROOT / "suites")


def run(pytester, monkeypatch, *args):
    monkeypatch.setenv("RIGCHECK_REPORT_DIR", str(pytester.path / "reports"))
    result = pytester.runpytest_inprocess(
        SUITES, "-p", "rigcheck.plugin", f"--facts={SNAPSHOT}", *args
    )
    [certificate] = (pytester.path / "reports").glob("*/certificate.json")
    return result, json.loads(certificate.read_text())


def verdict_line(result) -> str:
    return next(line for line in result.outlines if "rigcheck: verdict" in line)


# -- nothing measured -----------------------------------------------------------------------------


def test_a_facts_only_run_says_nothing_was_measured(pytester, monkeypatch):
    result, certificate = run(pytester, monkeypatch, "-m", "cpu and facts")
    assert result.ret == 0
    assert certificate["summary"]["measured"] == 0
    assert "verdict PASS (" in verdict_line(result)
    assert "; nothing measured)" in verdict_line(result)


def test_a_run_with_measurements_counts_them(pytester, monkeypatch):
    result, certificate = run(
        pytester, monkeypatch, "-m", "cpu and perf", f"--replay-measurements={RECORDED}"
    )
    assert certificate["summary"]["measured"] > 0
    assert "nothing measured" not in verdict_line(result)


def test_measured_count_counts_figures_with_a_value():
    checks = [
        {"figures": [{"measured": 1.0}, {"measured": None}]},
        {"figures": []},
        {"figures": [{"measured": 0.0}]},
        {},
    ]
    assert measured_count(checks) == 2
    assert measured_count([]) == 0


# -- one run at a time per folder -----------------------------------------------------------------


def test_a_second_run_waits_for_the_first(pytester, monkeypatch):
    """The lock is held here until the run says it is waiting, then let go: the run goes on."""
    reports = pytester.path / "reports"
    reports.mkdir()
    first = hold(reports, lambda line: None)
    first.seek(0)
    first.truncate()
    first.write("pid 4242, since 12:00:00Z")
    first.flush()
    said = []

    def say_then_release(self, line):
        said.append(line)
        first.close()  # the first run ends

    monkeypatch.setattr(ReportSession, "_say", say_then_release)
    try:
        result, certificate = run(pytester, monkeypatch, "-m", "cpu and facts")
    finally:
        first.close()
    assert result.ret == 0 and certificate["verdict"] == "pass"
    assert said == [
        f"rigcheck: another run is under way in {reports} (pid 4242, since 12:00:00Z): waiting "
        "for it to end, so that neither run measures the other's load (Ctrl-C stops waiting)"
    ]


def test_the_lock_is_released_with_its_file(tmp_path):
    said = []
    first = hold(tmp_path, said.append)
    first.close()
    second = hold(tmp_path, said.append)  # would block forever if the first still held it
    assert said == []
    assert (tmp_path / LOCK_NAME).read_text().startswith("pid ")
    second.close()
