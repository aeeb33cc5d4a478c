"""The judges on their own: a healthy node passes however its noise falls; a reading of the
wrong type, or one missing, is never a pass (fail closed); the cpu class skips what it lacks."""

from __future__ import annotations

import copy
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rigcheck.burnin import judge
from rigcheck.burnin.limits import Limits, parse_duration
from rigcheck.burnin.trace import trace_problem
from rigcheck.spec import load_spec
from rigcheck.testing.synthetic_trace import good_trace

H100 = Limits(load_spec("h100"))
GOOD = good_trace(duration_s=60.0, interval_s=0.5)
JUDGES = {
    "slowdown": lambda t: judge.slowdown(t, H100),
    "clock_floor": lambda t: judge.clock_floor(t, H100),
    "clock_spread": lambda t: judge.clock_spread(t, H100),
    "temperature": lambda t: judge.temperature(t, H100),
    "power": lambda t: judge.power(t, H100),
    "ecc": lambda t: judge.counters(t, H100, "ecc"),
    "remaps": lambda t: judge.counters(t, H100, "remaps"),
    "pcie": lambda t: judge.counters(t, H100, "pcie"),
    "xid": lambda t: judge.xid(t, H100),
    "repeats": judge.gemm_repeats,
    "across": judge.gemm_across_devices,
    "memory": lambda t: judge.memory_pattern(t, H100),
    "throughput": lambda t: judge.throughput(t, H100),
    "loaded": lambda t: judge.devices_loaded(t, 4),
}


@pytest.mark.parametrize("name", sorted(JUDGES))
def test_good_trace_passes(name):
    assert JUDGES[name](copy.deepcopy(GOOD)) == []


@given(
    clock=st.floats(0.92, 1.0),
    power=st.floats(0.9, 1.0),
    tflops=st.floats(0.92, 1.0),
    corrected=st.integers(0, 100),
    replays=st.integers(0, 80),
)
def test_healthy_variation_passes(clock, power, tflops, corrected, replays):
    """Within every limit (clocks within the spread, power near the cap, a throughput drift
    under 10%, counters at their limits) no judge cries wolf."""
    t = copy.deepcopy(GOOD)
    d = t["devices"][0]
    d["samples"]["clock_mhz"] = [v * clock for v in d["samples"]["clock_mhz"]]
    d["samples"]["power_w"] = [v * power for v in d["samples"]["power_w"]]
    w = d["windows"]
    w["tflops"] = [v * (tflops if k > len(w["t_s"]) / 2 else 1) for k, v in enumerate(w["tflops"])]
    d["counters_after"].update(ecc_corrected=3 + corrected, pcie_replays=replays)
    assert all(JUDGES[n](t) == [] for n in JUDGES)


BAD_VALUES = st.sampled_from(["N/A", "[Not Supported]", "", True, None, math.nan, {"error": "x"}])


@given(column=st.sampled_from(["clock_mhz", "power_w", "temperature_c"]), bad=BAD_VALUES)
def test_a_column_of_wrong_values_is_never_a_pass(column, bad):
    t = copy.deepcopy(GOOD)
    d = t["devices"][2]
    d["samples"][column] = [bad for _ in d["samples"][column]]
    affected = {
        "clock_mhz": ["clock_floor", "clock_spread"],
        "power_w": ["power"],
        "temperature_c": ["temperature"],
    }[column]
    if trace_problem(t) is None:  # None and NaN load; the judges must refuse them
        for name in affected:
            with pytest.raises(judge.CannotJudge):
                JUDGES[name](t)
    else:
        assert "gpu2" in trace_problem(t)


@given(key=st.sampled_from(["ecc_uncorrected", "pcie_replays", "remap_pending"]), bad=BAD_VALUES)
def test_a_counter_of_the_wrong_type_is_never_a_pass(key, bad):
    t = copy.deepcopy(GOOD)
    t["devices"][1]["counters_after"][key] = bad
    kind = {"ecc_uncorrected": "ecc", "pcie_replays": "pcie", "remap_pending": "remaps"}[key]
    with pytest.raises(judge.CannotJudge):
        JUDGES[kind](t)


def test_counter_not_supported_on_both_sides_is_skipped_per_counter():
    """NVML's NotSupported (None) before and after: a V100 has no row remapping to judge."""
    t = copy.deepcopy(GOOD)
    for d in t["devices"]:
        for side in ("counters_before", "counters_after"):
            d[side]["remap_pending"] = None
    assert JUDGES["remaps"](t) == []


def test_unread_xid_log_fails_closed():
    t = copy.deepcopy(GOOD)
    t["events"]["xid"] = {"error": "no kernel-log reader"}
    with pytest.raises(judge.CannotJudge, match="no kernel-log reader"):
        JUDGES["xid"](t)


def test_missing_reasons_column_is_not_available():
    t = copy.deepcopy(GOOD)
    for d in t["devices"]:
        del d["samples"]["reasons"]
    with pytest.raises(judge.NotAvailable):
        JUDGES["slowdown"](t)


def test_a_gemm_that_was_never_checked_cannot_pass():
    t = copy.deepcopy(GOOD)
    t["devices"][0]["windows"]["checks"] = [0 for _ in t["devices"][0]["windows"]["checks"]]
    with pytest.raises(judge.CannotJudge):
        JUDGES["repeats"](t)


def test_an_empty_memory_test_cannot_pass():
    t = copy.deepcopy(GOOD)
    t["devices"][0]["memory_test"].update(bytes_tested=0, passes=[])
    with pytest.raises(judge.CannotJudge):
        JUDGES["memory"](t)


def test_a_memory_test_over_too_little_memory_fails():
    t = copy.deepcopy(GOOD)
    t["devices"][3]["memory_test"]["bytes_tested"] = 2**30
    assert "gpu3" in JUDGES["memory"](t)[0]


def test_one_gpu_has_no_node_median():
    t = good_trace(gpus=1, duration_s=60.0, interval_s=0.5)
    with pytest.raises(judge.NotApplicable):
        JUDGES["clock_spread"](t)


def test_cpu_class_states_what_does_not_apply():
    cpu = Limits(load_spec("cpu"))
    for fn in (judge.clock_floor, judge.clock_spread, judge.power, judge.xid):
        with pytest.raises(judge.NotApplicable):
            fn(GOOD, cpu)


@pytest.mark.parametrize(("text", "seconds"), [("20s", 20), ("60s", 60), ("5m", 300), ("1h", 3600)])
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["5", "20 sec", "-5s", "2s", "m5", ""])
def test_bad_durations_say_the_form(text):
    with pytest.raises(ValueError, match=r"20s, 60s, 5m or 1h|at least"):
        parse_duration(text)


def test_a_class_without_limits_fails_closed():
    with pytest.raises(Exception, match="no burn-in limits"):
        Limits(load_spec("m4pro"))
