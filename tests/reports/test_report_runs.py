"""Real `pytest -m cpu` runs: what they leave in the report folder, finished or not."""

import datetime as dt
import json
import re
import signal
import subprocess
import time
import xml.etree.ElementTree as ET

import pytest
from suite_runs import SUITES, run_suites, suite_command, suite_env

from rigcheck.reports.certificate import load_certificate
from rigcheck.reports.location import run_name
from rigcheck.verdict import judge

NOW = dt.datetime.now(dt.timezone.utc)
FIGURE = {
    "unit": "TFLOP/s",
    "definition": "a figure invented for this test",
    "datasheet": {"value": 1000.0, "source": "test datasheet"},
    "achievable": {"value": 750.0, "source": "test achievable"},
    "floor": {"value": 600.0, "source": "test floor"},
}


def test_a_cpu_run_writes_junit_certificate_and_page(cpu_run):
    result, out = cpu_run
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["certificate.json", "junit.xml", "report.html"]
    certificate = load_certificate(out)  # validates against certificate.schema.json
    assert certificate["verdict"] == "pass"
    assert certificate["partial"] is False and certificate["exit_status"] == 0
    assert certificate["class"]["name"] == "cpu"
    assert certificate["class"]["spec_file"] == "expected/cpu.json"
    summary = certificate["summary"]
    assert summary["done"] == summary["selected"] == len(certificate["checks"]) > 0
    assert summary["pass"] > 0 and summary["fail"] == 0
    skipped = [c for c in certificate["checks"] if c["outcome"] == "skip"]
    assert all(c["message"] for c in skipped), "every skip says why"
    cases = ET.parse(out / "junit.xml").getroot().iter("testcase")
    assert len(list(cases)) == summary["selected"]
    assert "CONFORMS" in (out / "report.html").read_text()
    last = result.stdout.strip().splitlines()[-1]  # the run ends with its verdict
    assert "rigcheck: verdict PASS (0 failed" in last and "report.html" in last


def test_a_measured_warning_and_an_emitted_warning_make_warn(tmp_path, cpu_snapshot):
    judgement = judge("matmul_test_tflops", 650.0, FIGURE).as_dict()
    assert judgement["verdict"] == "warn"
    root = tmp_path / "reports"
    result = run_suites(
        tmp_path, "-m", "cpu", f"--facts={cpu_snapshot}", RIGCHECK_REPORT_DIR=str(root),
        RIGCHECK_STEER_RECORD="test_device_count",
        RIGCHECK_STEER_JUDGEMENT=json.dumps(judgement),
        RIGCHECK_STEER_WARN="test_product_matches_class",
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr  # a warning is not a failure
    [run] = run_folders(root)  # the run's own folder under $RIGCHECK_REPORT_DIR
    assert re.fullmatch(rf"\d{{8}}T\d{{6}}Z-{re.escape(run_name(NOW).split('-', 1)[1])}", run)
    out = root / run
    certificate = load_certificate(out)
    assert certificate["run"]["id"] == run
    checks = {c["name"]: c for c in certificate["checks"]}
    measured = checks["test_device_count"]
    assert measured["outcome"] == "warn"
    assert measured["figures"][0]["measured"] == 650.0
    assert measured["figures"][0]["ratio_to_datasheet"] == pytest.approx(0.65)
    assert checks["test_product_matches_class"]["outcome"] == "warn"
    assert "steer_run: a warning" in checks["test_product_matches_class"]["warnings"][0]
    assert certificate["verdict"] == "warn"
    case = next(
        c for c in ET.parse(out / "junit.xml").getroot().iter("testcase")
        if c.get("name") == "test_device_count"
    )  # fmt: skip
    properties = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert properties["measured"] == "650.0"
    assert properties["expected"] == "600.0"
    assert properties["unit"] == "TFLOP/s"
    page = (out / "report.html").read_text()
    assert 'class="plot" data-figure="matmul_test_tflops"' in page
    assert "CONFORMS, WITH WARNINGS" in page


def run_folders(root) -> list[str]:
    """The run folders under a report root (benchmarks/ is pytest-benchmark's storage, the lock
    file rigcheck.reports.run_lock's)."""
    if not root.exists():
        return []
    return sorted(p.name for p in root.iterdir() if p.name not in ("benchmarks", ".rigcheck.lock"))


def answer_ctrl_c() -> None:
    """In the run's process: SIGINT as a terminal delivers it, whatever this test process
    inherited. A shell that starts a job in the background without job control (`tox &`) hands
    it SIGINT ignored, every process below inherits that, and the run slept through the test's
    Ctrl-C (a local CI run: the paused run finished all 137 checks, the test timed out)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_paused_run(tmp_path, cpu_snapshot, pause_at: int):
    """Start a cpu run that sleeps inside its Nth check; return once it is there."""
    ready = tmp_path / "ready"
    out = tmp_path / "report"
    args = ["-m", "cpu", f"--facts={cpu_snapshot}", f"--report-dir={out}", SUITES]
    env = suite_env(RIGCHECK_STEER_PAUSE_AT=str(pause_at), RIGCHECK_STEER_READY=str(ready))
    proc = subprocess.Popen(
        suite_command(*args), cwd=tmp_path, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, preexec_fn=answer_ctrl_c,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not ready.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"the run never reached check {pause_at}:\n{proc.communicate()[0]}")
        time.sleep(0.05)
    return proc, out, ready.read_text()


def test_ctrl_c_mid_run_leaves_a_valid_partial_certificate(tmp_path, cpu_snapshot):
    proc, out, paused_in = start_paused_run(tmp_path, cpu_snapshot, pause_at=6)
    assert json.loads((out / "certificate.json").read_text())["summary"]["done"] == 5
    proc.send_signal(signal.SIGINT)
    output = proc.communicate(timeout=60)[0]
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, output
    certificate = load_certificate(out)
    assert certificate["partial"] is True and certificate["verdict"] == "incomplete"
    assert certificate["exit_status"] == 2
    assert certificate["partial_reason"].startswith("interrupted (Ctrl-C / SIGINT) after 5 of ")
    assert paused_in in certificate["partial_reason"]
    assert certificate["summary"]["done"] == 5
    assert paused_in in certificate["not_run"]
    page = (out / "report.html").read_text()
    assert "INCOMPLETE" in page and "Partial report" in page


def test_a_killed_run_leaves_what_it_measured_marked_partial(tmp_path, cpu_snapshot):
    proc, out, _ = start_paused_run(tmp_path, cpu_snapshot, pause_at=4)
    proc.kill()  # SIGKILL: no handler runs, only what was written before survives
    proc.communicate(timeout=60)
    certificate = load_certificate(out)
    assert certificate["partial"] is True and certificate["exit_status"] is None
    assert certificate["summary"]["done"] == 3
    assert "run in progress" in certificate["partial_reason"]
    assert not (out / "report.html").exists()
    rerender = subprocess.run(
        [*suite_command()[:1], "-m", "rigcheck", "report", str(out)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert rerender.returncode == 0, rerender.stderr
    assert "INCOMPLETE" in (out / "report.html").read_text()


def test_selecting_no_suite_check_says_nothing_was_checked(tmp_path, cpu_snapshot):
    root = tmp_path / "reports"
    result = run_suites(
        tmp_path, "-m", "cpu", "-k", "no_check_is_named_this", f"--facts={cpu_snapshot}",
        RIGCHECK_REPORT_DIR=str(root),
    )  # fmt: skip
    assert result.returncode == pytest.ExitCode.NO_TESTS_COLLECTED
    assert "rigcheck: nothing was checked" in result.stdout
    assert "just the class: rigcheck check CLASS (in a clone: pytest -m CLASS)" in result.stdout
    assert run_folders(root) == []


def test_a_run_of_other_tests_writes_no_report(tmp_path):
    (tmp_path / "test_other.py").write_text("def test_other():\n    pass\n")
    root = tmp_path / "reports"
    result = subprocess.run(
        [*suite_command()[:5], "-p", "rigcheck.plugin", "-p", "rigcheck.plugin.reports",
         "test_other.py"],
        cwd=tmp_path, env=suite_env(RIGCHECK_REPORT_DIR=str(root)), capture_output=True,
        text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout
    assert not root.exists()
    written = {p.name for p in tmp_path.rglob("*")}
    assert not written & {"junit.xml", "certificate.json", "report.html"}


def test_stopping_at_the_first_failure_is_a_partial_failing_certificate(tmp_path, cpu_snapshot):
    out = tmp_path / "report"
    result = run_suites(
        tmp_path, "-m", "cpu", "--gpus", "2", "-x", f"--facts={cpu_snapshot}",
        f"--report-dir={out}",
    )  # fmt: skip
    assert result.returncode == pytest.ExitCode.TESTS_FAILED
    certificate = load_certificate(out)
    assert certificate["verdict"] == "fail" and certificate["partial"] is True
    assert certificate["partial_reason"].startswith("stopping after 1 failures (after ")
    failed = [c for c in certificate["checks"] if c["outcome"] == "fail"]
    assert [c["name"] for c in failed] == ["test_device_count"]
    assert "expected 2 accelerator(s) for cpu, found 0" in failed[0]["message"]
    assert certificate["not_run"]


def test_setup_only_runs_no_check_and_certifies_nothing(tmp_path, cpu_snapshot):
    root = tmp_path / "reports"
    result = run_suites(
        tmp_path, "-m", "cpu", "--setup-only", f"--facts={cpu_snapshot}",
        RIGCHECK_REPORT_DIR=str(root),
    )  # fmt: skip
    assert result.returncode == 0, result.stdout
    assert run_folders(root) == []
