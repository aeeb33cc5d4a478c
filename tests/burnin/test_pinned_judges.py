"""The burn-in judges pinned where realistic bugs hide (tests/mutation/realistic/burnin.toml):
each NVML clock event reason classified entry by entry against the real binding, the slowdown
threshold read and not its neighbour, the 90th percentile taken from the top, and a column of
mostly failed readings refused rather than judged on what is left."""

from __future__ import annotations

import pynvml  # nvidia-ml-py, the real binding: its constants are NVML's own (nvml.h)
import pytest

from rigcheck.burnin import judge
from rigcheck.burnin.limits import Limits
from rigcheck.facts.nvidia.nvml import THROTTLE_REASONS
from rigcheck.spec import load_spec
from rigcheck.testing.synthetic_trace import good_trace

LIMITS = Limits(load_spec("h100"))
BAD = 2  # gpu2 of four

# nvml.h, nvmlClocksEventReason*: which reasons mean the GPU slowed itself down to protect
# itself (a fault under load) and which are how it is meant to run. NVML's documentation:
# SwPowerCap "clocks have been optimized to not exceed currently set power limits"; HwSlowdown
# "HW Slowdown (reducing the core clocks by a factor of 2 or more) is engaged" (temperature,
# power brake or power supply); SwThermalSlowdown / HwThermalSlowdown: a temperature is too
# high; HwPowerBrakeSlowdown: "the external power brake assertion is triggered".
SLOWDOWN_BY_REASON = {
    "nvmlClocksEventReasonGpuIdle": False,
    "nvmlClocksEventReasonApplicationsClocksSetting": False,
    "nvmlClocksEventReasonSwPowerCap": False,
    "nvmlClocksEventReasonHwSlowdown": True,
    "nvmlClocksEventReasonSyncBoost": False,
    "nvmlClocksEventReasonSwThermalSlowdown": True,
    "nvmlClocksEventReasonHwThermalSlowdown": True,
    "nvmlClocksEventReasonHwPowerBrakeSlowdown": True,
    "nvmlClocksEventReasonDisplayClockSetting": False,
    # Documented only as "Board limit." and "Reliability.": no protective slowdown is stated, so
    # not judged one; the clock floor still judges the speed they cost. nvidia-ml-py 13.615 has
    # them only under the throttle names.
    "nvmlClocksThrottleReasonBoardLimit": False,
    "nvmlClocksThrottleReasonReliability": False,
}


def test_the_reason_table_names_each_nvml_bit_once():
    bits = {getattr(pynvml, name) for name in SLOWDOWN_BY_REASON}
    assert bits == set(THROTTLE_REASONS)


@pytest.mark.parametrize("constant", SLOWDOWN_BY_REASON)
def test_each_clock_event_reason_is_judged_as_nvml_means_it(constant):
    name = THROTTLE_REASONS[getattr(pynvml, constant)]
    trace = good_trace()
    reasons = trace["devices"][BAD]["samples"]["reasons"]
    for k in range(len(reasons)):
        reasons[k] = ["sw_power_cap", name]
    problems = judge.slowdown(trace, LIMITS)
    if SLOWDOWN_BY_REASON[constant]:
        assert len(problems) == 1 and problems[0].startswith("gpu2 ") and name in problems[0]
    else:
        assert problems == []


def test_the_slowdown_threshold_is_judged_not_the_shutdown_one():
    trace = good_trace()
    trace["devices"][BAD]["limits"]["shutdown_temp_c"] = 30  # its neighbour: not judged here
    assert judge.temperature(trace, LIMITS) == []
    trace["devices"][BAD]["limits"]["slowdown_temp_c"] = 60
    problems = judge.temperature(trace, LIMITS)
    assert len(problems) == 1 and problems[0].startswith("gpu2 "), problems


def test_power_is_judged_at_its_90th_percentile_not_its_10th():
    """A fifth of the load at 100 W (a ramp, a pause) leaves the 90th percentile at the cap."""
    trace = good_trace()
    start, end = judge.load_window(trace)
    samples = trace["devices"][BAD]["samples"]
    inside = [k for k, t in enumerate(samples["t_s"]) if start <= t <= end]
    for k in inside[: len(inside) // 5]:
        samples["power_w"][k] = 100.0
    assert judge.power(trace, LIMITS) == []
    for k in inside[: len(inside) * 19 // 20]:
        samples["power_w"][k] = 100.0
    problems = judge.power(trace, LIMITS)
    assert len(problems) == 1 and problems[0].startswith("gpu2 "), problems


@pytest.mark.parametrize(("failed", "judged"), [(0.6, False), (0.4, True)])
def test_a_column_of_mostly_failed_readings_cannot_be_judged(failed, judged):
    trace = good_trace()
    start, end = judge.load_window(trace)
    samples = trace["devices"][BAD]["samples"]
    inside = [k for k, t in enumerate(samples["t_s"]) if start <= t <= end]
    for k in inside[: int(len(inside) * failed)]:
        samples["clock_mhz"][k] = None
    if judged:
        assert judge.clock_floor(trace, LIMITS) == []
    else:
        with pytest.raises(judge.CannotJudge, match=r"^gpu2 .* readings failed"):
            judge.clock_floor(trace, LIMITS)


def test_a_gpu_boosting_above_the_others_makes_no_other_gpu_an_outlier():
    """The spread is measured from the node's median, not its fastest GPU."""
    trace = good_trace()
    start, end = judge.load_window(trace)
    samples = trace["devices"][0]["samples"]
    for k, t in enumerate(samples["t_s"]):
        if start <= t <= end:
            samples["clock_mhz"][k] = 1980  # gpu0 holds its maximum; the others sustain 1,755
    assert judge.clock_spread(trace, LIMITS) == []
    for d in trace["devices"][1:2]:  # two of four at 1,980: the median moves up to 1,868
        d["samples"]["clock_mhz"] = list(samples["clock_mhz"])
    assert judge.clock_spread(trace, LIMITS) == []


def test_a_gemm_repeat_that_differs_is_counted_from_the_first_result():
    """Only the last repeat differs from the first: one differing repeat, first at its time."""
    trace = good_trace()
    w = trace["devices"][BAD]["windows"]
    w["checksum"][-1] ^= 1
    (problem,) = judge.gemm_repeats(trace)
    assert problem.startswith("gpu2 ")
    assert f": 1 of {sum(w['checks'])} repeats" in problem, problem
    assert problem.endswith(f"first at {w['t_s'][-1]:.0f} s"), problem


def test_memory_errors_without_a_first_error_record_still_fail():
    """A memory test that counted wrong words but kept no first-error record still failed."""
    trace = good_trace()
    trace["devices"][BAD]["memory_test"].update(errors=3, first_error=None)
    problems = judge.memory_pattern(trace, LIMITS)
    assert len(problems) == 1 and problems[0].startswith("gpu2 "), problems
    assert "3 words read back wrong" in problems[0]


def test_the_hottest_reading_is_judged_not_the_last():
    """A GPU that reached its slowdown temperature mid-load and cooled by the end failed."""
    trace = good_trace()
    samples = trace["devices"][BAD]["samples"]
    samples["temperature_c"][len(samples["t_s"]) // 2] = 86.0  # threshold 87 C less 5 C margin
    problems = judge.temperature(trace, LIMITS)
    assert len(problems) == 1 and problems[0].startswith("gpu2 "), problems
    assert "86 C at" in problems[0]


@pytest.mark.parametrize("capped", [False, True])
def test_a_memory_test_is_short_unless_the_user_capped_it(capped):
    """--memory-max-gib caps the pattern test on purpose: only an uncapped short test fails."""
    trace = good_trace()
    m = trace["devices"][BAD]["memory_test"]
    m.update(bytes_tested=m["bytes_free"] // 10, capped=capped)
    problems = judge.memory_pattern(trace, LIMITS)
    assert (problems == []) is capped, problems
    if not capped:
        assert len(problems) == 1 and problems[0].startswith("gpu2 "), problems


def test_clock_event_reasons_mostly_unread_cannot_be_judged():
    trace = good_trace()
    reasons = trace["devices"][BAD]["samples"]["reasons"]
    for k in range(0, len(reasons) * 6 // 10):
        reasons[k] = None  # NVML refused the read
    with pytest.raises(judge.CannotJudge, match=r"^gpu2 .*most clock event reason readings"):
        judge.slowdown(trace, LIMITS)


def test_a_gemm_mismatch_is_reported_from_its_first_occurrence():
    trace = good_trace()
    w = trace["devices"][BAD]["windows"]
    w["mismatches"][9] = w["mismatches"][49] = 1  # at 10 s and at 50 s
    (problem,) = judge.gemm_repeats(trace)
    assert problem.endswith(f"first at {w['t_s'][9]:.0f} s"), problem
