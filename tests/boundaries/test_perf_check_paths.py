"""The perf check's other paths: a kernel that raises or cannot see its device, torch's warnings
kept with the figure, what each judged figure records, and the spread across devices with a
device missing (rigcheck.measure.check, through the real suite where it can be)."""

from __future__ import annotations

import warnings

import pytest

from rigcheck.measure.catalogue import Entry
from rigcheck.measure.check import run_live
from rigcheck.measure.device import DeviceNotVisible, MeasuredDevice
from rigcheck.measure.measurement import Measurement
from rigcheck.spec import load_spec
from rigcheck.testing.synthetic import synthetic_snapshot

CPU = MeasuredDevice("cpu", "cpu", "cpu")


def entry(run) -> Entry:
    return Entry("matmul_fp32_tflops", "TFLOP/s", run, lambda spec, facts, device: None)


def test_a_live_figure_keeps_torch_warnings_once_and_its_telemetry_and_wall_time():
    def run(device, timer, spec):
        assert spec.name == "cpu" and timer.device.type == "cpu"  # the class's spec, the device
        warnings.warn("TF32 is off", stacklevel=1)
        warnings.warn("TF32 is off", stacklevel=1)
        warnings.warn("slow path", stacklevel=1)
        return Measurement("matmul_fp32_tflops", device.label, 1.5, "TFLOP/s", "2mnk/t")

    measured = run_live(entry(run), CPU, load_spec("cpu"), None)
    assert measured.details["warnings"] == ["TF32 is off", "slow path"]
    assert measured.telemetry == {
        "samples": 0,
        "unavailable": "no telemetry for cpu devices (NVML only)",
    }
    assert isinstance(measured.wall_s, float) and 0 <= measured.wall_s < 60
    quiet = run_live(entry(lambda d, t, s: Measurement("k", "cpu", 1.0, "u", "d")), CPU,
                     load_spec("cpu"), None)  # fmt: skip
    assert "warnings" not in quiet.details


def test_a_kernel_that_raises_fails_with_what_torch_said():
    def run(device, timer, spec):
        warnings.warn("cuBLAS workspace too small", stacklevel=1)
        warnings.warn("cuBLAS workspace too small", stacklevel=1)
        warnings.warn("TF32 off", stacklevel=1)
        raise RuntimeError("CUDA error: an illegal memory access")

    with pytest.raises(pytest.fail.Exception) as failed:
        run_live(entry(run), CPU, load_spec("cpu"), None)
    assert str(failed.value) == (
        "matmul_fp32_tflops could not be measured on cpu: RuntimeError: CUDA error: an illegal "
        "memory access (torch warned: cuBLAS workspace too small; TF32 off)"
    )
    assert failed.value.pytrace is False  # the message is the finding, not a traceback

    def silent(device, timer, spec):
        raise ValueError("no")

    with pytest.raises(pytest.fail.Exception) as failed:
        run_live(entry(silent), CPU, load_spec("cpu"), None)
    assert str(failed.value) == "matmul_fp32_tflops could not be measured on cpu: ValueError: no"


def test_a_device_torch_cannot_see_fails_naming_it():
    def run(device, timer, spec):
        raise DeviceNotVisible("GPU 3 is not among the 2 device(s) torch sees")

    with pytest.raises(pytest.fail.Exception) as failed:
        run_live(entry(run), CPU, load_spec("cpu"), None)
    assert str(failed.value) == (
        "cannot measure matmul_fp32_tflops: GPU 3 is not among the 2 device(s) torch sees"
    )
    assert failed.value.pytrace is False


def replay(values: dict) -> dict:
    entries = [
        {"key": k, "device": d, "value": v} for k, per in values.items() for d, v in per.items()
    ]
    return {"rigcheck_measurements": 1, "kind": "synthetic", "note": "t", "measurements": entries}


def test_each_judged_figure_records_its_measurement_and_first_attempt(run_suite):
    facts = synthetic_snapshot(load_spec("h100"))
    figures = replay({"matmul_bf16_tflops": {"0": [100.0, 700.0]}})
    run = run_suite("perf", "-m", "h100 and perf", "-k", "test_matmul_tflops and bf16",
                    facts=facts, replay=figures)  # fmt: skip
    (name,) = run.outcomes
    recorded = run.properties[name]
    assert recorded["rigcheck_first_attempt"] == 100.0
    measurement = recorded["rigcheck_measurement"]
    assert {k: measurement[k] for k in ("value", "best", "unit", "definition", "wall_s")} == {
        "value": 700.0,
        "best": None,
        "unit": "TFLOP/s",
        "definition": "no definition recorded",
        "wall_s": None,
    }
    assert measurement["origin"].startswith("synthetic: ")
    assert recorded["rigcheck"]["verdict"] == "warn"


def test_spread_with_a_device_not_measured_and_an_outlier(run_suite):
    facts = synthetic_snapshot(load_spec("h100"), gpus=3)
    figures = replay({"device_copy_gbps": {"0": 3000.0, "1": 2000.0}})
    run = run_suite("perf", "-m", "h100 and perf", "--gpus", "3", "-k", "device_copy_gbps",
                    facts=facts, replay=figures)  # fmt: skip
    spread = "test_memory_bandwidth_spread_across_devices[device_copy_gbps]"
    assert run.outcomes[spread] == "failed", run.describe()
    message = run.messages[spread]
    assert "device_copy_gbps: GPU 1 (0000:2a:00.0): 2,000 GB/s, others 3,000 (33% slower)" in (
        message
    )
    assert " (not measured: GPU 2 (0000:3a:00.0)). Read the slow device's own check above" in (
        message
    )
    assert run.properties[spread]["rigcheck_spread"] == {
        "figure": "device_copy_gbps",
        "unit": "GB/s",
        "values": {"GPU 0 (0000:18:00.0)": 3000.0, "GPU 1 (0000:2a:00.0)": 2000.0},
    }
    one = replay({"device_copy_gbps": {"0": 3000.0}})
    run = run_suite("perf", "-m", "h100 and perf", "--gpus", "3", "-k", "device_copy_gbps",
                    facts=facts, replay=one)  # fmt: skip
    assert (
        "device_copy_gbps was measured on 1 device(s): see the per-device checks"
        in (run.messages[spread])
    ), run.describe()


def test_warnings_point_at_the_suite_check_that_raised_them(run_suite):
    """stacklevel=2: the warnings summary names the check in suites/perf, not check.py."""
    facts = synthetic_snapshot(load_spec("h200"), gpus=2)  # h200: its copy has an achievable tier
    figures = replay({"device_copy_gbps": {"0": 2900.0, "1": 2730.0}})  # warns; 6% spread
    run = run_suite("perf", "-m", "h200 and perf", "--gpus", "2", "-k", "device_copy_gbps",
                    facts=facts, replay=figures)  # fmt: skip
    assert run.ret == 0, run.describe()
    lines = run.output.splitlines()
    for warning in ("DeviceSpreadWarning: device_copy_gbps: spread", "BelowAchievableWarning"):
        at = next(i for i, line in enumerate(lines) if warning in line)
        assert "suites/perf/test_memory_bandwidth.py:" in lines[at], lines[at]


def test_the_wall_time_is_kept_to_the_millisecond(monkeypatch):
    clock = iter([100.0, 100.1234567])
    monkeypatch.setattr("rigcheck.measure.check.time.perf_counter", lambda: next(clock, 101.0))
    measured = run_live(entry(lambda d, t, s: Measurement("k", "cpu", 1.0, "u", "d")), CPU,
                        load_spec("cpu"), None)  # fmt: skip
    assert measured.wall_s == 0.123


def perf_check(values: dict, benchmark=None):
    """A PerfCheck on a replayed h100, as the `perf` fixture builds it; records kept."""
    from types import SimpleNamespace

    from rigcheck.facts import Facts
    from rigcheck.measure.check import PerfCheck, PerfSession
    from rigcheck.measure.replay import ReplayedMeasurements

    session = PerfSession(replay=ReplayedMeasurements(replay(values), "replayed.json"))
    request = SimpleNamespace(node=SimpleNamespace(nodeid="suite::check"), config=None)
    recorded: list = []
    facts = Facts(synthetic_snapshot(load_spec("h100")))
    check = PerfCheck(session, request, load_spec("h100"), facts, benchmark,
                      lambda key, value: recorded.append((key, value)))  # fmt: skip
    return check, recorded, facts


def test_a_judged_figure_goes_to_the_benchmark_store_with_everything_that_explains_it():
    from types import SimpleNamespace

    from rigcheck.measure.device import measured_devices

    benchmark = SimpleNamespace(extra_info={})
    floor = load_spec("h100").figures["train_step_tokens_per_s"]["floor"]["value"]
    check, recorded, facts = perf_check(
        {"train_step_tokens_per_s": {"0": [1000.0, floor * 2]}}, benchmark
    )
    (gpu,) = measured_devices(facts, "cuda")
    judged = check.check("train_step_tokens_per_s", gpu)
    assert judged.verdict == "pass"
    extra = benchmark.extra_info
    peak = load_spec("h100").figures["matmul_bf16_tflops"]["datasheet"]["value"]
    assert extra["details"]["mfu_peak_tflops"] == peak and extra["details"]["mfu"] > 0
    assert {k: v for k, v in extra.items() if k != "details"} == {
        "value": floor * 2,
        "best": None,
        "unit": "tokens/s",
        "definition": "no definition recorded",
        "wall_s": None,
        "origin": "synthetic: replayed.json",
        "telemetry": None,
        "figure": "train_step_tokens_per_s",
        "device": gpu.label,
        "verdict": "pass",
        "floor": judged.floor,
        "achievable": judged.achievable,
        "datasheet": judged.datasheet,
        "ratio_to_datasheet": judged.ratio_to_datasheet,
        "first_attempt": 1000.0,
    }
    assert [key for key, _ in recorded] == [
        "rigcheck",
        "rigcheck_measurement",
        "rigcheck_first_attempt",
    ]
    assert check.session.results[0].nodeid == "suite::check"
    assert check.session.values("train_step_tokens_per_s")["0"].judgement is judged


def test_every_spread_check_names_a_slow_gpu(run_suite):
    """Each figure's spread check in suites/perf compares that figure across the devices."""
    from rigcheck.measure.catalogue import CATALOGUE

    spec = load_spec("h100")
    floored = {
        k: f["floor"]["value"] for k, f in spec.figures.items() if k in CATALOGUE and f.get("floor")
    }
    figures = replay({key: {"0": floor * 2, "1": floor * 1.2} for key, floor in floored.items()})
    run = run_suite("perf", "-m", "h100 and perf", "--gpus", "2",
                    facts=synthetic_snapshot(spec, gpus=2), replay=figures)  # fmt: skip
    spreads = {n: o for n, o in run.outcomes.items() if "spread" in n}
    assert len(spreads) == len(floored) and set(spreads.values()) == {"failed"}, run.describe()
    for name in spreads:
        key = next(k for k in floored if k in run.messages[name])
        assert f"{key}: GPU 1 (0000:2a:00.0): " in run.messages[name], run.messages[name]
        assert "(40% slower)" in run.messages[name]


def test_a_figure_missing_from_the_replay_fails_naming_it():
    from rigcheck.measure.device import measured_devices

    check, _, facts = perf_check({"device_copy_gbps": {"1": 3000.0}})
    (gpu,) = measured_devices(facts, "cuda")
    with pytest.raises(pytest.fail.Exception) as failed:
        check.check("device_copy_gbps", gpu)
    assert str(failed.value) == (
        f"no recorded measurement of device_copy_gbps for {gpu.label} in replayed.json"
    )
