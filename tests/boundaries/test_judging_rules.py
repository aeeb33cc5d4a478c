"""The judging rules themselves, in-process: a figure's verdict and every word of its message
(rigcheck.verdict.judge), the spread across devices at its exact thresholds, the failure text a
perf check prints, and the figures derived from a measurement (rigcheck.measure.check)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from rigcheck.facts import Facts
from rigcheck.measure.check import (
    NORMAL_SPREAD,
    OUTLIER,
    derived,
    failure_message,
    figure_for,
    spread_finding,
)
from rigcheck.measure.measurement import Measurement
from rigcheck.measure.train_step import mfu
from rigcheck.spec import load_spec
from rigcheck.verdict import FAIL, PASS, PROPERTY, WARN, Judgement, judge, record

FIGURE = {
    "unit": "TFLOP/s",
    "datasheet": {"value": 1000.0, "source": "datasheet"},
    "achievable": {"value": 800.0, "source": "measured"},
    "floor": {"value": 640.0, "source": "0.8 x achievable"},
    "warn_band": 0.25,  # warns under 600: below the floor, so never
}
BAND = {**FIGURE, "warn_band": 0.1}  # warns under 720


def test_the_verdicts_and_their_exact_messages():
    assert judge("x", 639.0, FIGURE) == Judgement(
        "x", FAIL, 639.0, "TFLOP/s", 640.0, 800.0, 1000.0,
        "below the floor: measured 639.0 TFLOP/s (floor 640.0, achievable 800.0, "
        "datasheet 1,000.0, 64% of datasheet)",
        "0.8 x achievable",
    )  # fmt: skip
    warned = judge("x", 719.0, BAND)
    assert (warned.verdict, warned.reason) == (
        WARN,
        "more than 10% under the achievable figure: measured 719.0 TFLOP/s (floor 640.0, "
        "achievable 800.0, datasheet 1,000.0, 72% of datasheet)",
    )
    assert warned.source == "0.8 x achievable"
    passed = judge("x", 720.0, BAND)
    assert (passed.verdict, passed.reason) == (
        PASS,
        "measured 720.0 TFLOP/s (floor 640.0, achievable 800.0, datasheet 1,000.0, "
        "72% of datasheet)",
    )


@pytest.mark.parametrize(
    ("measured", "verdict"),
    [(639.99, FAIL), (640.0, PASS), (640.01, PASS), (10_000.0, PASS)],
)
def test_the_floor_is_the_lowest_passing_figure(measured, verdict):
    assert judge("x", measured, FIGURE).verdict == verdict


@pytest.mark.parametrize(
    ("band", "edge"),
    [(0.1, 720.0), (0.15, 680.0), (None, 720.0)],  # None: the default band, 10%
)
def test_the_warning_starts_just_under_the_band(band, edge):
    figure = {**FIGURE, "warn_band": band} if band is not None else dict(FIGURE)
    if band is None:
        del figure["warn_band"]
    assert judge("x", edge, figure).verdict == PASS
    assert judge("x", edge - 0.01, figure).verdict == WARN


def test_without_an_achievable_figure_above_the_floor_passes():
    figure = {**FIGURE, "achievable": None}
    judged = judge("x", 641.0, figure)
    assert (judged.verdict, judged.achievable) == (PASS, None)
    assert "achievable unknown" in judged.reason


def test_no_reference_fails_closed_and_says_why():
    missing = judge("x", 5.0, None)
    assert (missing.verdict, missing.unit, missing.source) == (FAIL, "?", None)
    assert missing.reason == (
        "no reference for this class (not in spec): measured 5 ? (floor unknown, "
        "achievable unknown, datasheet unknown)"
    )
    unknown = {"unit": "GB/s", "floor": None, "achievable": None, "datasheet": None}
    assert judge("x", 12.5, unknown).reason.startswith(
        "no reference for this class (no figure in the spec): measured 12.5 GB/s"
    )
    told = {**unknown, "unknown_reason": "not measured yet"}
    judged = judge("x", 0.25, told)
    assert (judged.verdict, judged.source) == (FAIL, None)
    assert judged.reason.startswith("no reference for this class (not measured yet): measured 0.25")
    # even a huge figure: without a floor nothing is known to be good
    assert judge("x", 1e9, {**FIGURE, "floor": None}).verdict == FAIL


def test_small_figures_keep_three_significant_digits():
    figure = {
        "unit": "TFLOP/s",
        "datasheet": {"value": 0.6656, "source": "computed"},
        "achievable": {"value": 0.5, "source": "x"},
        "floor": {"value": 0.25, "source": "y"},
    }
    assert judge("x", 0.123456, figure).reason == (
        "below the floor: measured 0.123 TFLOP/s (floor 0.25, achievable 0.5, "
        "datasheet 0.666, 19% of datasheet)"
    )
    assert judge("x", 9.99, {**figure, "datasheet": None}).reason.endswith("datasheet unknown)")


@pytest.mark.parametrize(
    ("measured", "shown"), [(9.99, "9.99"), (10.0, "10.0"), (10.04, "10.0"), (-12.5, "-12.5")]
)
def test_ten_is_the_first_figure_shown_with_one_decimal(measured, shown):
    figure = {"unit": "GB/s", "floor": {"value": 1.0, "source": "s"}}
    assert f"measured {shown} GB/s (floor 1, " in judge("x", measured, figure).reason


def test_the_ratio_to_the_datasheet_and_the_recorded_dict():
    judged = judge("x", 700.0, FIGURE)
    assert judged.ratio_to_datasheet == 0.7
    assert judged.as_dict() == {
        "figure": "x",
        "verdict": PASS,
        "measured": 700.0,
        "unit": "TFLOP/s",
        "floor": 640.0,
        "achievable": 800.0,
        "datasheet": 1000.0,
        "reason": judged.reason,
        "source": "0.8 x achievable",
        "ratio_to_datasheet": 0.7,
    }
    assert judge("x", 700.0, {**FIGURE, "datasheet": None}).ratio_to_datasheet is None
    assert Judgement("x", FAIL, None, "u", 1.0, None, 2.0, "r").ratio_to_datasheet is None
    recorded = []
    record(lambda key, value: recorded.append((key, value)), judged)
    assert recorded == [(PROPERTY, judged.as_dict())] and PROPERTY == "rigcheck"


# ---- the spread across devices ----


def test_the_spread_thresholds_are_five_and_ten_percent():
    assert (NORMAL_SPREAD, OUTLIER) == (0.05, 0.10)


@pytest.mark.parametrize(
    ("values", "verdict"),
    [
        ({"a": 100.0, "b": 95.0}, PASS),  # exactly 5%: normal
        ({"a": 100.0, "b": 94.99}, WARN),
        ({"a": 100.0, "b": 100.0, "c": 90.0}, WARN),  # exactly 10% under the others: no outlier
        ({"a": 100.0, "b": 100.0, "c": 89.99}, FAIL),
        ({"a": 100.0, "b": 100.0}, PASS),
    ],
)
def test_spread_boundaries(values, verdict):
    assert spread_finding(values, "GB/s")[0] == verdict


def test_spread_messages_name_the_devices():
    verdict, message = spread_finding({"GPU 0": 100.0, "GPU 1": 94.0, "GPU 2": 99.0}, "GB/s")
    assert (verdict, message) == (
        WARN,
        "spread 6.0% across 3 devices (normal is up to 5%): slowest GPU 1 94 GB/s, "
        "fastest GPU 0 100 GB/s",
    )
    verdict, message = spread_finding({"a": 1000.0, "b": 1010.0, "c": 500.0, "d": 400.0}, "x")
    assert verdict == FAIL
    assert message == "c: 500 x, others 1,000 (50% slower); d: 400 x, others 1,000 (60% slower)"
    assert spread_finding({"a": 2.0, "b": 2.01}, "TFLOP/s")[1].endswith(
        "slowest a 2 TFLOP/s, fastest b 2.01 TFLOP/s"
    )


# ---- what a failed perf check prints ----


def measured(value, **fields) -> Measurement:
    base = {"key": "x", "device": "GPU 0", "value": value, "unit": "TFLOP/s"}
    return Measurement(**{**base, "definition": "2*m*n*k / time", "origin": "live", **fields})


GPU = SimpleNamespace(label="GPU 0 (0000:18:00.0)")


def test_a_failure_below_the_floor_gives_the_numbers_the_retry_and_what_to_do():
    first = measured(500.0)
    second = measured(510.0, best=530.0)
    text = failure_message(GPU, second, judge("x", 510.0, FIGURE), first)
    assert text.splitlines() == [
        "GPU 0 (0000:18:00.0): x below the floor: measured 510.0 TFLOP/s (floor 640.0, "
        "achievable 800.0, datasheet 1,000.0, 51% of datasheet)",
        "Measured 510 TFLOP/s (median, best 530, live): 2*m*n*k / time.",
        "Retried once: the first attempt measured 500.0 TFLOP/s.",
        "no telemetry recorded.",
        "Look at the telemetry above, `nvidia-smi -q -d PERFORMANCE,POWER,TEMPERATURE`, other "
        "processes on the device, and the kernel log (`dmesg | grep -i xid`).",
    ]
    alone = failure_message(GPU, second, judge("x", 510.0, FIGURE), None)
    assert "Retried" not in alone


def test_a_failure_without_a_reference_says_to_add_the_figure():
    text = failure_message(GPU, measured(1.5), judge("x", 1.5, None), None)
    assert text.splitlines() == [
        "GPU 0 (0000:18:00.0): x no reference for this class (not in spec): measured 1.5 ? "
        "(floor unknown, achievable unknown, datasheet unknown)",
        "Measured 1.5 TFLOP/s (median, live): 2*m*n*k / time.",
        "Add the figure, with its source, to the class's spec file to judge it.",
    ]


# ---- figures derived from a measurement ----


@pytest.mark.parametrize("name", ["h100", "v100", "mi300x"])
def test_mfu_uses_the_class_training_precision_peak(name):
    spec = load_spec(name)
    step = measured(50_000.0)
    step.key = "train_step_tokens_per_s"
    precision = "fp16" if name == "v100" else "bf16"
    peak = spec.figures[f"matmul_{precision}_tflops"]["datasheet"]["value"]
    assert derived(spec, step) == {"mfu": mfu(50_000.0, peak), "mfu_peak_tflops": peak}
    step.details["precision"] = "fp16"
    fp16 = spec.figures["matmul_fp16_tflops"]["datasheet"]["value"]
    assert derived(spec, step)["mfu_peak_tflops"] == fp16
    assert derived(spec, measured(1.0)) == {}  # only the training step has an MFU


def test_mfu_without_a_datasheet_peak_says_so():
    spec = load_spec("cpu")
    step = measured(10.0, details={"precision": "fp8"})
    step.key = "train_step_tokens_per_s"
    assert derived(spec, step) == {
        "mfu": None,
        "mfu_reason": "no datasheet fp8 peak in the spec",
    }


def test_a_gpu_figure_is_the_spec_figure_as_written():
    spec = load_spec("h100")
    facts = Facts({"host": {}})
    assert figure_for(spec, facts, "matmul_bf16_tflops") is spec.figures["matmul_bf16_tflops"]
    assert figure_for(spec, facts, "no_such_figure") is None
