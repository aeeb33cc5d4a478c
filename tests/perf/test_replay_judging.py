"""The real perf checks judge injected figures: pass, warn, fail below the floor after one
retry, fail closed without a reference, skip what the class lacks, name a slow GPU."""

from __future__ import annotations

import json
from pathlib import Path

from perf_inputs import cpu_facts, h100_facts, measurements

from rigcheck.spec import load_spec

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
H100_SYNTHETIC = FIXTURES / "measurements" / "h100-synthetic.json"

BF16 = "-k", "test_matmul_tflops and bf16"


def test_a_figure_at_achievable_passes_and_records_its_judgement(perf_run):
    run = perf_run(h100_facts(), measurements(matmul_bf16_tflops={0: 790.0}), *BF16)
    assert run.outcomes == {"test_matmul_tflops[gpu0-bf16]": "passed"}, run.output
    judged = run.properties["test_matmul_tflops[gpu0-bf16]"]["rigcheck"]
    assert judged["verdict"] == "pass"
    assert (judged["measured"], judged["floor"], judged["achievable"]) == (790.0, 635.0, 794.5)
    assert judged["ratio_to_datasheet"] == 790.0 / 989.5
    assert "figures replayed from" in run.output and "(synthetic)" in run.output


def test_a_figure_under_achievable_passes_with_a_warning(perf_run):
    run = perf_run(h100_facts(), measurements(matmul_bf16_tflops={0: 700.0}), *BF16)
    assert run.only("passed") == ["test_matmul_tflops[gpu0-bf16]"], run.output
    assert run.properties["test_matmul_tflops[gpu0-bf16]"]["rigcheck"]["verdict"] == "warn"
    assert any(
        "BelowAchievableWarning: GPU 0 (0000:18:00.0): matmul_bf16_tflops more than 10% under "
        "the achievable figure: measured 700.0 TFLOP/s" in w
        for w in run.warnings
    ), run.output


def test_a_figure_below_the_floor_fails_after_one_retry_with_every_number(perf_run):
    replay = measurements(matmul_bf16_tflops={0: [500.0, 510.0, 999.0]})
    run = perf_run(h100_facts(), replay, *BF16)
    name = "test_matmul_tflops[gpu0-bf16]"
    assert run.outcomes == {name: "failed"}, run.output
    message = run.messages[name]
    assert (
        "GPU 0 (0000:18:00.0): matmul_bf16_tflops below the floor: measured 510.0 TFLOP/s "
        "(floor 635.0, achievable 794.5, datasheet 989.5, 52% of datasheet)" in message
    )
    assert "Retried once: the first attempt measured 500.0 TFLOP/s." in message
    assert "nvidia-smi -q -d PERFORMANCE" in message  # what to do about it
    assert run.properties[name]["rigcheck_first_attempt"] == 500.0
    assert run.properties[name]["rigcheck"]["verdict"] == "fail"


def test_a_retry_that_reaches_the_floor_passes(perf_run):
    run = perf_run(h100_facts(), measurements(matmul_bf16_tflops={0: [500.0, 780.0]}), *BF16)
    name = "test_matmul_tflops[gpu0-bf16]"
    assert run.outcomes == {name: "passed"}, run.output
    assert run.properties[name]["rigcheck_first_attempt"] == 500.0
    assert run.properties[name]["rigcheck"]["measured"] == 780.0


def test_figures_without_a_reference_fail_closed_without_retrying(perf_run):
    replay = measurements(
        matmul_fp32_tflops={0: [51.0, 60.0]}, matmul_fp8_tflops={0: [1400.0, 1500.0]}
    )
    run = perf_run(h100_facts(), replay, "-k", "test_matmul_tflops and (fp32 or fp8)")
    assert run.only("failed") == ["test_matmul_tflops[gpu0-fp32]", "test_matmul_tflops[gpu0-fp8]"]
    fp32, fp8 = (
        run.messages["test_matmul_tflops[gpu0-fp32]"],
        run.messages["test_matmul_tflops[gpu0-fp8]"],
    )
    assert "matmul_fp32_tflops no reference for this class (not in spec)" in fp32
    assert "Measured 51 TFLOP/s" in fp32 and "Retried" not in fp32
    assert "no reference for this class (no measured fp8 figure yet" in fp8
    assert "datasheet 1,979.0, 71% of datasheet" in fp8


def test_a_missing_recorded_figure_fails_closed(perf_run):
    run = perf_run(h100_facts(), measurements(device_copy_gbps={0: 3000.0}), *BF16)
    assert run.outcomes == {"test_matmul_tflops[gpu0-bf16]": "failed"}
    assert (
        "no recorded measurement of matmul_bf16_tflops for GPU 0 (0000:18:00.0) in"
        in (run.messages["test_matmul_tflops[gpu0-bf16]"])
    )


def test_checks_the_class_cannot_run_skip_with_their_reason(perf_run):
    replay = measurements(
        matmul_fp32_tflops={"cpu": 0.2},
        matmul_bf16_tflops={"cpu": 0.5},
        device_copy_gbps={"cpu": 20.0},
        device_triad_gbps={"cpu": 18.0},
    )
    run = perf_run(cpu_facts(), replay, "-m", "cpu and perf")
    assert run.ret == 0, run.output
    assert run.only("passed") == [
        "test_matmul_tflops[cpu-bf16]",
        "test_matmul_tflops[cpu-fp32]",
        "test_memory_bandwidth[cpu-device_copy_gbps]",
        "test_memory_bandwidth[cpu-device_triad_gbps]",
    ]
    assert "TF32 is a GPU tensor-core mode" in run.messages["test_matmul_tflops[cpu-tf32]"]
    assert "has no fp8 tensor cores" in run.messages["test_matmul_tflops[cpu-fp8]"]
    assert "no separate host link" in run.messages["test_host_link[cpu-h2d_pinned_gbps]"]
    assert (
        "one device: nothing to compare"
        in (run.messages["test_matmul_spread_across_devices[bf16]"])
    )


def test_the_cpu_peak_is_computed_from_the_host_facts(perf_run):
    run = perf_run(
        cpu_facts(),
        measurements(matmul_bf16_tflops={"cpu": 0.5}),
        "-m",
        "cpu",
        "-k",
        "test_matmul_tflops and bf16",
    )
    judged = run.properties["test_matmul_tflops[cpu-bf16]"]["rigcheck"]
    assert judged["verdict"] == "pass", run.output
    # 2 cores x 2.6 GHz x 16 lanes x 2 FMA pipes x 2 FLOP x 2 (bf16 pairs) = 0.6656 TFLOP/s
    assert abs(judged["datasheet"] - 0.6656) < 1e-9


def test_one_slow_gpu_among_four_is_named(perf_run):
    replay = measurements(matmul_bf16_tflops={0: 790.0, 1: 795.0, 2: 785.0, 3: 612.0})
    run = perf_run(h100_facts(4), replay, "-m", "h100 and perf", "--gpus", "4", "-k", "bf16")
    assert run.only("failed") == [
        "test_matmul_spread_across_devices[bf16]",
        "test_matmul_tflops[gpu3-bf16]",  # 612 is also under the floor of 635
    ], run.output
    assert (
        "matmul_bf16_tflops: GPU 3 (0000:5d:00.0): 612 TFLOP/s, others 790 (23% slower)"
        in run.messages["test_matmul_spread_across_devices[bf16]"]
    )


def test_a_spread_over_five_percent_warns_and_a_normal_one_passes(perf_run):
    wide = measurements(matmul_bf16_tflops={0: 790.0, 1: 740.0})
    run = perf_run(h100_facts(2), wide, "--gpus", "2", "-k", "bf16")
    assert run.only("failed") == [], run.output
    assert any(
        "DeviceSpreadWarning: matmul_bf16_tflops: spread 6.3% across 2 devices" in w
        for w in run.warnings
    ), run.output
    normal = measurements(matmul_bf16_tflops={0: 790.0, 1: 770.0})
    run = perf_run(h100_facts(2), normal, "--gpus", "2", "-k", "bf16")
    assert run.only("passed") == [
        "test_matmul_spread_across_devices[bf16]",
        "test_matmul_tflops[gpu0-bf16]",
        "test_matmul_tflops[gpu1-bf16]",
    ]
    assert not any("SpreadWarning" in w for w in run.warnings)


def test_replayed_facts_without_measurements_measure_nothing(perf_run):
    run = perf_run(h100_facts(), None, *BF16)
    assert run.outcomes == {"test_matmul_tflops[gpu0-bf16]": "skipped"}
    assert (
        "measurements need the live machine, or recorded ones with --replay-measurements"
        in (run.messages["test_matmul_tflops[gpu0-bf16]"])
    )


def test_a_machine_without_its_gpus_leaves_the_failure_to_the_identity_check(perf_run):
    run = perf_run(cpu_facts(), measurements(), "-m", "h100 and perf", "-k", "tflops and bf16")
    assert run.outcomes == {"test_matmul_tflops[none-bf16]": "skipped"}, run.output
    assert (
        "not a h100 machine (test_identity fails): expected NVIDIA H100"
        in (run.messages["test_matmul_tflops[none-bf16]"])
    )


def test_the_reference_figures_pass_the_committed_h100_spec(perf_run, monkeypatch):
    """fixtures/measurements/h100-synthetic.json (public figures, and one written by hand) against
    expected/h100.json as committed: a spec figure that a healthy H100 fails is a wrong spec."""
    monkeypatch.delenv("RIGCHECK_EXPECTED_DIR")
    replay = json.loads(H100_SYNTHETIC.read_text())
    keys = [m["key"] for m in replay["measurements"]]
    ids = [f"(tflops and {k.split('_')[1]})" if k.startswith("matmul_") else k for k in keys]
    selected = f"({' or '.join(ids)}) and not spread"
    run = perf_run(h100_facts(), replay, "-m", "h100 and perf", "-k", selected)
    judged = {
        p["rigcheck"]["figure"]: name for name, p in run.properties.items() if "rigcheck" in p
    }
    assert sorted(judged) == sorted(keys), run.output
    figures = load_spec("h100").figures
    for key, name in judged.items():
        if (figures.get(key) or {}).get("floor"):
            assert run.outcomes[name] == "passed", f"{name}: {run.messages.get(name)}"
        else:
            assert run.outcomes[name] == "failed", run.output
            assert "no reference for this class" in run.messages[name]


def test_a_recorded_cpu_run_replays_to_its_verdicts(perf_run, monkeypatch):
    """fixtures/measurements/cpu-ci-recorded.json: `pytest -m "cpu and perf"
    --record-measurements=...` on the 2-core CI VM, judged again by the committed cpu spec."""
    monkeypatch.delenv("RIGCHECK_EXPECTED_DIR")
    facts = json.loads((FIXTURES / "snapshots" / "cpu-ci.json").read_text())
    recorded = json.loads((FIXTURES / "measurements" / "cpu-ci-recorded.json").read_text())
    assert recorded["kind"] == "recorded"
    run = perf_run(facts, recorded, "-m", "cpu and perf")
    assert run.ret == 0, run.output
    assert run.only("passed") == [
        "test_matmul_tflops[cpu-bf16]",
        "test_matmul_tflops[cpu-fp32]",
        "test_memory_bandwidth[cpu-device_copy_gbps]",
        "test_memory_bandwidth[cpu-device_triad_gbps]",
    ]
    assert "(recorded)" in run.output
