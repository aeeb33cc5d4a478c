"""Each fault a burn-in must catch fails at its named check, and only where it should; the
healthy trace passes every check (replayed through the real suites, as a user would)."""

from __future__ import annotations

import pytest
from burnin_runs import failed

from rigcheck.testing.synthetic_trace import FAULTS, faulty_trace, good_trace


def test_good_trace_passes_every_check(judge_trace):
    result, cases = judge_trace(good_trace())
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert len(cases) == 17 and {c.outcome for c in cases.values()} == {"passed"}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_fault_fails_at_its_named_check(judge_trace, fault):
    _, named, also = FAULTS[fault]
    _, cases = judge_trace(faulty_trace(fault))
    assert named in failed(cases), f"{fault} did not fail {named}: {failed(cases)}"
    assert failed(cases) == {named} | also, f"{fault} failed more than it should"
    message = cases[named].message
    assert "gpu" in message or "Xid" in message, f"the failure names no GPU: {message}"


def test_thermal_throttle_names_the_gpu_and_the_time(judge_trace):
    _, cases = judge_trace(faulty_trace("thermal_throttle"))
    message = cases["test_no_thermal_or_power_brake_slowdown"].message
    assert "gpu1" in message and "first at 90 s" in message, message
    assert "gpu0" not in message


def test_trace_of_another_class_fails_every_check(judge_trace):
    trace = good_trace()
    trace["class"] = "a100"
    _, cases = judge_trace(trace)
    assert failed(cases) == set(cases)
    assert "recorded for 'a100'" in next(iter(cases.values())).message


def test_trace_loading_fewer_gpus_than_the_node_fails(judge_trace):
    _, cases = judge_trace(good_trace(gpus=3), gpus=4)
    assert failed(cases) == {"test_every_device_loaded"}
    assert "loaded 3 devices, the node has 4" in cases["test_every_device_loaded"].message


def test_burn_in_checks_are_off_by_default(pytester):
    from burnin_runs import REPO, SNAPSHOT

    common = ["-p", "no:cacheprovider", "-p", "no:rigcheck.plugin.reports", "--rootdir", str(REPO)]
    result = pytester.runpytest_inprocess(
        "-m", "h100", f"--facts={SNAPSHOT}", "--collect-only", "-q", *common, str(REPO / "suites")
    )
    assert "test_burnin.py" not in result.stdout.str()
    assert "(17 deselected)" in result.stdout.str()
    only = pytester.runpytest_inprocess(
        "-m", "h100 and burn_in", f"--facts={SNAPSHOT}", *common, str(REPO / "suites")
    )
    assert only.ret == pytest.ExitCode.USAGE_ERROR
    assert "add --burn-in=60s" in only.stderr.str()


def test_report_plots_the_trace_it_judged(judge_trace, tmp_path):
    """report.html gets a chart per quantity, one line per GPU; the trace lies beside it."""
    run_dir = tmp_path / "run"
    judge_trace(
        faulty_trace("thermal_throttle"), "-p", "rigcheck.plugin.reports", f"--report-dir={run_dir}"
    )
    page = (run_dir / "report.html").read_text()
    assert (run_dir / "burnin-trace.json").is_file()
    assert 'id="burn-in"' in page
    for quantity in ("clock", "temperature", "power", "GEMM throughput"):
        chart = page.split(f'data-quantity="{quantity}"')[1].split("</svg>")[0]
        assert chart.count("<polyline") == 4, quantity


def test_a_recorded_cpu_trace_is_judged_again(judge_trace):
    """The trace a live `pytest -m cpu --burn-in=20s` wrote on CI passes when replayed."""
    from burnin_runs import REPO

    recorded = REPO / "fixtures" / "burnin" / "cpu-ci.json"
    snapshot = REPO / "fixtures" / "snapshots" / "cpu-ci.json"
    result, cases = judge_trace(recorded, f"--facts={snapshot}", klass="cpu")
    assert result.ret == 0, result.stdout.str()[-2000:]
    outcomes = {c.outcome for c in cases.values()}
    assert outcomes == {"passed", "skipped"} and len(cases) == 17
    assert cases["test_memory_pattern_test_clean"].outcome == "passed"
