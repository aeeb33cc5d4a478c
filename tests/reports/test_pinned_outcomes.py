"""Report decisions pinned where realistic bugs hide (tests/mutation/realistic/reports.toml): a
check whose body never ran failed; an xfail-marked check that passed is a warning; in `rigcheck
diff`, a latency in ms that went up is worse, a changed power limit is a difference, and an
incomplete run that now finishes with warnings got better."""

from __future__ import annotations

import pytest

from rigcheck.reports import diff
from rigcheck.reports.outcome import check_outcome


def report(when: str, outcome: str = "passed", **extra) -> pytest.TestReport:
    return pytest.TestReport(
        "suites/facts/test_x.py::test_x", ("suites/facts/test_x.py", 1, "test_x"), {}, outcome,
        None, when, **extra,
    )  # fmt: skip


def test_a_check_whose_call_never_ran_has_failed():
    check = check_outcome([report("setup"), report("teardown")])
    assert (check["outcome"], check["message"]) == (
        "fail",
        "the check did not run (no call phase reported)",
    )


def test_an_xfail_marked_check_that_passed_is_a_warning():
    call = report("call", wasxfail="reason: NVML reports no serial on this board")
    check = check_outcome([report("setup"), call, report("teardown")])
    assert check["outcome"] == "warn"
    assert check["message"] == (
        "passed although marked xfail (NVML reports no serial on this board)"
    )


@pytest.mark.parametrize("unit", ["s", "ms", "us", "µs"])
def test_a_time_that_went_up_is_worse_in_every_time_unit(unit):
    slower = diff._moved("allreduce_latency", {"measured": 10.0, "unit": unit},
                         {"measured": 20.0, "unit": unit}, None)  # fmt: skip
    faster = diff._moved("allreduce_latency", {"measured": 20.0, "unit": unit},
                         {"measured": 10.0, "unit": unit}, None)  # fmt: skip
    assert (slower.worse, faster.better) == (True, True)


def test_a_rate_that_went_up_is_better():
    up = diff._moved("matmul", {"measured": 600.0, "unit": "TFLOP/s"},
                     {"measured": 700.0, "unit": "TFLOP/s"}, None)  # fmt: skip
    assert up.better and not up.worse


@pytest.mark.parametrize("field", ["limit_w", "default_limit_w", "enforced_limit_w"])
def test_a_changed_power_limit_is_a_difference_and_a_changed_draw_is_not(field):
    before = {"devices": [{"power": {"draw_w": 80.0, field: 700.0}}]}
    after = {"devices": [{"power": {"draw_w": 95.0, field: 500.0}}]}
    changes = diff.fact_changes(before, after)
    assert [(c.key, c.before, c.after) for c in changes] == [
        (f"devices.0.power.{field}", 700.0, 500.0)
    ]


@pytest.mark.parametrize(
    ("before", "after", "better"),
    [("incomplete", "warn", True), ("incomplete", "pass", True), ("warn", "incomplete", False),
     ("fail", "warn", True), ("pass", "warn", False), ("incomplete", "fail", False)],
)  # fmt: skip
def test_verdict_moves_up_and_down_the_ladder(before, after, better):
    assert diff._ranked_up(before, after) is better


def test_a_passing_check_that_warned_is_a_warning():
    """A warning the check raised (an application's Xid, say) turns its pass into a warn."""
    reports = [report("setup"), report("call"), report("teardown")]
    check = check_outcome(reports, ["UserWarning: application-caused Xid events: Xid 13 x1"])
    assert (check["outcome"], check["message"]) == (
        "warn",
        "UserWarning: application-caused Xid events: Xid 13 x1",
    )


def test_a_check_that_failed_and_then_errored_in_teardown_reports_its_failure():
    """The first failing phase is what the check said; a teardown error after it is not."""
    call_ = report("call", "failed")
    call_.longrepr = "AssertionError: GPU 2 is capped"
    teardown = report("teardown", "failed")
    teardown.longrepr = "RuntimeError: cleanup broke"
    check = check_outcome([report("setup"), call_, teardown])
    assert (check["outcome"], check["phase"]) == ("fail", "call")
    assert check["message"] == "GPU 2 is capped", check["message"]


def test_a_figure_measured_in_only_one_certificate_is_a_difference():
    def certificate(figures):
        return {"checks": [{"name": "test_matmul[bf16]", "figures": figures}]}

    entry = {"figure": "matmul_bf16_tflops", "label": "gpu0", "measured": 700.0,
             "unit": "TFLOP/s"}  # fmt: skip
    gone = diff.figure_changes(certificate([entry]), certificate([]), None)
    new = diff.figure_changes(certificate([]), certificate([entry]), None)
    assert [(c.key, c.note, c.worse) for c in gone] == [
        ("matmul_bf16_tflops gpu0", "not measured in B", True)
    ]
    assert [c.note for c in new] == ["not measured in A"]


@pytest.mark.parametrize("field", ["sm_max_mhz", "mem_max_mhz"])
def test_a_changed_maximum_clock_is_a_difference_and_the_current_clock_is_not(field):
    before = {"devices": [{"clocks": {"sm_mhz": 345, "mem_mhz": 1593, field: 1980}}]}
    after = {"devices": [{"clocks": {"sm_mhz": 1755, "mem_mhz": 2619, field: 1410}}]}
    assert [c.key for c in diff.fact_changes(before, after)] == [f"devices.0.clocks.{field}"]


@pytest.mark.parametrize("side", ["A", "B"])
def test_a_partial_certificate_on_either_side_is_a_difference(side):
    def certificate(partial):
        return {"class": {"name": "h100"}, "verdict": "pass", "partial": partial,
                "partial_reason": "interrupted (SIGTERM)" if partial else None}  # fmt: skip

    a, b = certificate(side == "A"), certificate(side == "B")
    changes = diff._run_changes(a, b)
    assert [(c.key, c.after) for c in changes] == [(f"{side} is partial", "interrupted (SIGTERM)")]
