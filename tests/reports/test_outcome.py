"""A check's outcome from pytest's own reports, on a small throwaway test file."""

import pytest

from rigcheck.reports.outcome import check_outcome

CHECKS = """
import pytest

def test_assert():
    found = ["GPU 3"]
    assert not found, "expected no missing GPU, found GPU 3. Check nvidia-smi -L."

def test_fail_closed():
    pytest.fail("cannot check: fact 'devices' could not be read", pytrace=False)

@pytest.fixture
def broken():
    raise RuntimeError("fixture broke")

def test_setup_error(broken):
    pass

def test_skip():
    pytest.skip("only for cuda classes; cpu is cpu")

@pytest.mark.xfail(reason="known: NVML reports no serial on this board", strict=True)
def test_xfail():
    assert False

def test_judged_warn(record_property):
    record_property("rigcheck", {"figure": "x_tflops", "verdict": "warn", "reason": "slow"})

def test_judged_fail_but_passed(record_property):
    record_property("rigcheck", {"figure": "x_tflops", "verdict": "fail", "reason": "too slow"})
"""


@pytest.fixture
def checks(pytester):
    pytester.makepyfile(test_checks=CHECKS)
    recorder = pytester.inline_run("-p", "no:cacheprovider")
    reports: dict[str, list] = {}
    for report in recorder.getreports("pytest_runtest_logreport"):
        reports.setdefault(report.nodeid.split("::")[-1], []).append(report)
    return {name: check_outcome(rs) for name, rs in reports.items()}


def test_a_failed_assert_gives_its_message_without_the_introspection(checks):
    check = checks["test_assert"]
    assert check["outcome"] == "fail" and check["phase"] == "call"
    assert check["message"] == "expected no missing GPU, found GPU 3. Check nvidia-smi -L."
    assert "assert not" in check["detail"]


def test_fail_without_traceback_and_errors_in_setup(checks):
    assert checks["test_fail_closed"]["message"].startswith("cannot check: fact 'devices'")
    setup = checks["test_setup_error"]
    assert setup["outcome"] == "fail" and setup["phase"] == "setup"
    assert setup["message"] == "error in setup: RuntimeError: fixture broke"


def test_skip_and_xfail_keep_their_reasons(checks):
    assert checks["test_skip"]["outcome"] == "skip"
    assert checks["test_skip"]["message"] == "only for cuda classes; cpu is cpu"
    assert checks["test_xfail"]["outcome"] == "xfail"
    assert checks["test_xfail"]["message"] == "known: NVML reports no serial on this board"


def test_recorded_judgements_decide_warn_and_fail_closed(checks):
    assert checks["test_judged_warn"]["outcome"] == "warn"
    assert checks["test_judged_warn"]["figures"][0]["figure"] == "x_tflops"
    assert checks["test_judged_fail_but_passed"]["outcome"] == "fail"
    assert "too slow" in checks["test_judged_fail_but_passed"]["message"]
