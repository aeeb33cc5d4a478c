"""Every way a run ends gives the documented exit code and a full report set (issue 11)."""

import json
import signal
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from suite_runs import run_suites
from test_report_runs import start_paused_run

from rigcheck.reports import ending
from rigcheck.reports.certificate import load_certificate, validate_certificate
from rigcheck.reports.html import render_html


def test_sigterm_ends_like_ctrl_c_with_every_report(tmp_path, cpu_snapshot):
    proc, out, paused_in = start_paused_run(tmp_path, cpu_snapshot, pause_at=4)
    proc.send_signal(signal.SIGTERM)
    output = proc.communicate(timeout=60)[0]
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, output
    assert "Traceback" not in output
    certificate = load_certificate(out)
    assert certificate["exit_status"] == 2 and certificate["verdict"] == "incomplete"
    assert certificate["partial_reason"].startswith("terminated (SIGTERM) after 3 of ")
    assert paused_in in certificate["partial_reason"]
    assert (out / "junit.xml").exists() and "INCOMPLETE" in (out / "report.html").read_text()


def test_a_report_folder_holding_a_run_is_never_overwritten(cpu_run, cpu_snapshot):
    _, out = cpu_run
    before = (out / "certificate.json").read_bytes()
    again = run_suites(out.parent, "-m", "cpu", f"--facts={cpu_snapshot}", f"--report-dir={out}")
    assert again.returncode == pytest.ExitCode.USAGE_ERROR, again.stdout
    assert "already holds a run" in again.stderr and "Traceback" not in again.stderr
    assert len(again.stderr.strip().splitlines()) == 1, again.stderr
    assert (out / "certificate.json").read_bytes() == before


@pytest.mark.parametrize("kind", ["file", "unwritable", "under a file"])
def test_a_report_dir_that_cannot_take_the_reports_is_one_line(tmp_path, kind):
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    path = {"file": blocker, "unwritable": locked / "r", "under a file": blocker / "r"}[kind]
    problem = ending.report_dir_problem(str(path))
    if kind == "unwritable" and subprocess.run(["id", "-u"], capture_output=True).stdout == b"0\n":
        pytest.skip("root can write anywhere")
    assert problem and str(path) in problem and "\n" not in problem
    assert not (locked / "r").exists()


def fake_benchmark_session(regressions, compared=True):
    return SimpleNamespace(
        compare_fail=["mean:5%"],
        performance_regressions=list(regressions),
        compared_mapping={"0001.json": {}} if compared else {},
        logger=SimpleNamespace(warning=lambda text: None),
    )


def test_a_regression_becomes_the_verdict_and_is_taken_from_pytest_benchmark():
    bench = fake_benchmark_session([("test_matmul[cpu] (0001)", "mean +40% > 5%")])
    found = ending.take_regressions(SimpleNamespace(_benchmarksession=bench))
    assert found == [{"benchmark": "test_matmul[cpu] (0001)", "reason": "mean +40% > 5%"}]
    assert bench.performance_regressions == []  # pytest-benchmark would raise on them
    fixture = Path(__file__).parents[2] / "fixtures" / "certificates" / "h100-node-before.json"
    certificate = {**json.loads(fixture.read_text()), "verdict": "regressed", "regressions": found}
    validate_certificate(certificate, "regressed")
    assert "PERFORMANCE REGRESSED" in render_html(certificate)
    assert "mean +40% &gt; 5%" in render_html(certificate)


def test_compare_fail_with_nothing_stored_is_disarmed_not_a_usage_error_at_the_end():
    bench = fake_benchmark_session([], compared=False)
    assert ending.take_regressions(SimpleNamespace(_benchmarksession=bench)) == []
    assert bench.compare_fail == []


def test_a_crash_ends_with_exit_3_and_every_report(tmp_path, cpu_snapshot):
    out = tmp_path / "report"
    run = run_suites(tmp_path, "-m", "cpu", f"--facts={cpu_snapshot}", f"--report-dir={out}",
                     "-p", "crash_run")  # fmt: skip
    assert run.returncode == pytest.ExitCode.INTERNAL_ERROR, run.stdout
    certificate = load_certificate(out)
    assert certificate["exit_status"] == 3 and certificate["verdict"] == "incomplete"
    assert certificate["partial_reason"].startswith("crashed: internal error")
    assert (out / "junit.xml").exists() and (out / "report.html").exists()


def test_a_real_regression_is_exit_1_and_verdict_regressed(tmp_path):
    """One live cpu matmul run compared with a stored baseline 1000x faster than any real run
    (fixtures/benchmark_baseline_1000x_faster.json): it regressed, by pytest-benchmark's own
    comparison."""
    from pytest_benchmark.utils import get_machine_id

    store = tmp_path / "store"
    baseline = Path(__file__).parents[2] / "fixtures" / "benchmark_baseline_1000x_faster.json"
    (store / get_machine_id()).mkdir(parents=True)
    (store / get_machine_id() / "0001_baseline.json").write_text(baseline.read_text())
    out = tmp_path / "run"
    run = run_suites(tmp_path, "-m", "cpu and perf", "-k", "test_matmul_tflops and fp32",
                     f"--benchmark-storage=file://{store}", "--benchmark-compare=0001",
                     "--benchmark-compare-fail=mean:10%", f"--report-dir={out}")  # fmt: skip
    assert run.returncode == 1, run.stdout + run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    certificate = load_certificate(out)
    assert certificate["verdict"] == "regressed" and certificate["exit_status"] == 1
    assert "test_matmul_tflops[cpu-fp32]" in certificate["regressions"][0]["benchmark"]
    assert "rigcheck: regressed: test_matmul_tflops[cpu-fp32]" in run.stdout
    assert (out / "benchmark.json").exists() and (out / "junit.xml").exists()
    assert "PERFORMANCE REGRESSED" in (out / "report.html").read_text()


def test_a_passing_plan_prints_its_headroom(tmp_path, cpu_snapshot):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"model": "gpt2", "method": "lora", "batch": 1, "seq": 128}))
    run = run_suites(tmp_path, "-m", "cpu and memory", f"--facts={cpu_snapshot}", f"--plan={plan}",
                     f"--report-dir={tmp_path / 'out'}")  # fmt: skip
    assert run.returncode == 0, run.stdout
    assert f"rigcheck: --plan {plan} fits: needs" in run.stdout and "headroom" in run.stdout
    assert run.stdout.strip().splitlines()[-1].startswith("= rigcheck: verdict PASS")


def test_a_burst_of_ctrl_c_still_ends_cleanly_with_exit_2(tmp_path, cpu_snapshot):
    proc, out, _ = start_paused_run(tmp_path, cpu_snapshot, pause_at=3)
    for _ in range(8):  # an impatient user: the later ones land in the report writing/cleanup
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        time.sleep(0.05)
    output = proc.communicate(timeout=60)[0]
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, output
    assert "Traceback" not in output and "another Ctrl-C is ignored" in output
    assert load_certificate(out)["exit_status"] == 2
    assert (out / "junit.xml").exists() and (out / "report.html").exists()
