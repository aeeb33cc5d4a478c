"""The perf plugin as a user meets it: live storage per class, the xdist guard, recording."""

from __future__ import annotations

import json

from perf_inputs import h100_facts, measurements

from rigcheck.measure.replay import load_replay
from rigcheck.plugin.measure import machine_summary


def test_a_live_cpu_measurement_is_stored_per_class_with_its_figures(perf_run, spec_dir):
    run = perf_run(None, None, "-m", "cpu and perf", "-k", "device_copy_gbps and not spread")
    assert run.outcomes == {"test_memory_bandwidth[cpu-device_copy_gbps]": "passed"}, run.output
    assert "device_copy_gbps on cpu:" in run.output  # the wall-time summary
    stored = list((spec_dir.parent / "reports" / "benchmarks" / "cpu").glob("*/0001_*.json"))
    assert len(stored) == 1, run.output
    saved = json.loads(stored[0].read_text())
    assert saved["machine_info"]["rigcheck"]["class"] == "cpu"
    (bench,) = saved["benchmarks"]
    extra = bench["extra_info"]
    assert extra["figure"] == "device_copy_gbps" and extra["verdict"] == "pass"
    assert extra["unit"] == "GB/s" and extra["floor"] == 2.0 and extra["value"] > 2.0
    # pytest-benchmark stores seconds per copy: rounds of calls_per_round copies each
    assert bench["stats"]["iterations"] == extra["details"]["calls_per_round"]
    assert bench["stats"]["rounds"] == 5
    gb = extra["details"]["bytes_counted_per_call"] / 1e9
    assert abs(gb / bench["stats"]["median"] - extra["value"]) < 1e-6 * extra["value"]


def test_a_run_that_times_nothing_leaves_no_benchmark_folder(perf_run, pytester, spec_dir):
    """No class in -m (as `rigcheck slurm prolog` runs it) and nothing timed: pytest-benchmark
    made ./.benchmarks in the user's folder as it started; rigcheck's storage is taken back."""
    replay = measurements(device_copy_gbps={0: 2950.0})
    run = perf_run(h100_facts(), replay, "-k", "device_copy_gbps and not spread")
    assert run.only("passed") == ["test_memory_bandwidth[gpu0-device_copy_gbps]"], run.output
    assert not (pytester.path / ".benchmarks").exists()  # pytester runs in its own folder
    assert not (spec_dir.parent / "reports" / "benchmarks").exists()


def test_measurements_refuse_to_run_under_xdist(perf_run, monkeypatch):
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    run = perf_run(None, None, "-m", "cpu and perf", "-k", "tflops and fp32")
    assert run.outcomes == {"test_matmul_tflops[cpu-fp32]": "failed"}, run.output
    assert (
        "measurements never run under pytest-xdist (this is worker gw1)"
        in (run.messages["test_matmul_tflops[cpu-fp32]"])
    )


def test_record_measurements_writes_a_replayable_file(perf_run, pytester):
    recorded = pytester.path / "recorded.json"
    replay = measurements(matmul_bf16_tflops={0: 790.0}, device_copy_gbps={0: 2950.0})
    run = perf_run(
        h100_facts(), replay, f"--record-measurements={recorded}", "-k", "(tflops and bf16) or copy"
    )
    assert run.only("passed") == [
        "test_matmul_tflops[gpu0-bf16]",
        "test_memory_bandwidth[gpu0-device_copy_gbps]",
    ], run.output
    again = load_replay(recorded)
    assert again.kind == "recorded"
    copy = again.measurement("device_copy_gbps", "GB/s", "0", "GPU 0", attempt=0)
    assert copy.value == 2950.0 and copy.unit == "GB/s"


def test_a_broken_replay_file_is_a_usage_error(perf_run):
    run = perf_run(h100_facts(), {"kind": "synthetic", "measurements": []})
    assert run.ret == 4  # pytest.ExitCode.USAGE_ERROR
    assert 'not a rigcheck measurements file: expected an object with "rigcheck_measurements"' in (
        run.output
    )


def test_machine_info_carries_what_makes_runs_comparable():
    info = machine_summary(h100_facts(2), "h100")
    assert info["class"] == "h100" and info["driver"] == "550.90.07"
    assert (info["torch"], info["cuda"]) == ("2.5.1+cu124", "12.4")
    assert info["devices"][1] == {
        "name": "NVIDIA H100 80GB HBM3",
        "pci_device_id": "0x2330",
        "sm_max_mhz": 1980,
        "mem_max_mhz": 2619,
        "power_limit_w": 700.0,
    }
