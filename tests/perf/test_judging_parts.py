"""The pieces the perf checks judge with: the computed cpu peak, the spread across devices,
telemetry summaries, and replay files."""

from __future__ import annotations

import json

import pytest
from perf_inputs import cpu_facts, h100_facts

from rigcheck.facts import Facts
from rigcheck.measure.check import figure_for, spread_finding
from rigcheck.measure.cpu_peak import cpu_peak_tflops
from rigcheck.measure.device import measured_devices
from rigcheck.measure.replay import ReplayError, load_replay
from rigcheck.measure.telemetry import Telemetry, explain, summarise
from rigcheck.spec import load_spec
from rigcheck.testing.nvml_sim import machine_profile, simulated_nvml
from rigcheck.verdict import FAIL, PASS, WARN


def host(**cpu) -> Facts:
    facts = cpu_facts()
    facts["host"]["cpu"].update(cpu)
    return Facts(facts)


def test_cpu_peak_is_cores_times_clock_times_simd_fma_width_times_two():
    peak = cpu_peak_tflops(host(), "fp32")
    assert peak.tflops == pytest.approx(2 * 2.6e9 * 16 * 2 * 2 / 1e12)
    assert peak.formula.startswith("2 cores x 2,600 MHz (advertised clock; turbo can exceed it)")
    assert "16 fp32 lanes (avx512f) x 2 FMA pipes (assumed) x 2" in peak.formula


@pytest.mark.parametrize(
    ("flags", "fp32_per_cycle", "bf16_per_cycle"),
    [
        (["avx2", "fma"], 32, 32),  # no native bf16: computed in fp32
        (["avx2", "avx512f", "fma", "avx512_bf16"], 64, 128),
        (["avx512f", "amx_bf16", "amx_tile"], 64, 1024),
        (["asimd", "bf16"], 16, 32),
    ],
)
def test_cpu_peak_follows_the_simd_flags(flags, fp32_per_cycle, bf16_per_cycle):
    facts = host(simd_flags=flags, max_mhz=1000, cores_physical=1)
    assert cpu_peak_tflops(facts, "fp32").tflops == pytest.approx(fp32_per_cycle * 1e9 / 1e12)
    assert cpu_peak_tflops(facts, "bf16").tflops == pytest.approx(bf16_per_cycle * 1e9 / 1e12)


def test_cpu_peak_is_unknown_without_the_facts():
    assert cpu_peak_tflops(host(simd_flags=[]), "fp32") is None
    assert cpu_peak_tflops(Facts({"host": {"cpu": {"error": "no cpuinfo"}}}), "fp32") is None


def test_the_cpu_figure_gets_the_computed_peak_as_its_datasheet():
    figure = figure_for(load_spec("cpu"), host(), "matmul_bf16_tflops")
    assert figure["datasheet"]["value"] == pytest.approx(0.6656)
    assert figure["datasheet"]["source"].startswith("computed: 2 cores x 2,600 MHz")
    assert figure_for(load_spec("cpu"), host(), "device_copy_gbps")["datasheet"] is None


def test_spread_names_the_outlier_against_the_median_of_the_others():
    verdict, message = spread_finding({"GPU 0": 790, "GPU 1": 800, "GPU 2": 780, "GPU 3": 612}, "x")
    assert verdict == FAIL
    assert message == "GPU 3: 612 x, others 790 (23% slower)"


def test_spread_within_five_percent_passes_and_wider_warns():
    assert spread_finding({"a": 100.0, "b": 96.0}, "GB/s")[0] == PASS
    verdict, message = spread_finding({"a": 100.0, "b": 93.0}, "GB/s")
    assert verdict == WARN
    assert message.startswith("spread 7.0% across 2 devices (normal is up to 5%): slowest b 93")


def test_devices_are_named_as_the_facts_name_them():
    devices = measured_devices(Facts(h100_facts(2)), "cuda")
    assert [(d.ident, d.label, d.param_id) for d in devices] == [
        ("0", "GPU 0 (0000:18:00.0)", "gpu0"),
        ("1", "GPU 1 (0000:2a:00.0)", "gpu1"),
    ]
    assert [d.param_id for d in measured_devices(Facts(cpu_facts()), "cpu")] == ["cpu"]


def hot_h100(throttle_mask: int) -> dict:
    """An H100 at 1,410 MHz, 87 C and 699 W of 700 W, for the simulated libnvidia-ml."""
    machine = machine_profile("h100_hgx")
    gpu = machine["gpus"][0]
    gpu["clocks"]["sm"], gpu["temperature_c"] = 1410, 87
    gpu["power"].update(draw_mw=699_000, enforced_limit_mw=700_000)
    gpu["clock_event_reasons"] = throttle_mask
    return machine


def test_telemetry_samples_the_gpu_while_it_is_measured():
    (device,) = measured_devices(Facts(h100_facts(1)), "cuda")
    with simulated_nvml(hot_h100(0x1 | 0x20)), Telemetry(device, interval_s=0.001) as telemetry:
        while len(telemetry.samples) < 3:  # idle + sw thermal
            pass
    summary = telemetry.summary()
    assert summary["throttle_reasons"] == ["sw_thermal_slowdown"]  # gpu_idle is benign
    assert explain(summary) == (
        "during the run: SM clock 1,410 MHz median (min 1,410, max 1,980), 87 C max, "
        "699 W max of 700 W limit, throttle reasons: sw_thermal_slowdown"
    )


def test_telemetry_says_why_there_is_none():
    (cpu,) = measured_devices(Facts(cpu_facts()), "cpu")
    with Telemetry(cpu) as telemetry:
        pass
    assert explain(telemetry.summary()) == "no telemetry for cpu devices (NVML only)"
    assert summarise([])["samples"] == 0


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{", "not valid JSON"),
        ({"rigcheck_measurements": 1, "kind": "guessed", "measurements": []}, '"kind" must be'),
        (
            {"rigcheck_measurements": 1, "kind": "synthetic", "measurements": [{"key": "x"}]},
            "measurements[0] needs key, device and value",
        ),
        (
            {
                "rigcheck_measurements": 1,
                "kind": "recorded",
                "measurements": [{"key": "x", "device": 0, "value": "fast"}],
            },
            "must be a number",
        ),
    ],
)
def test_replay_files_that_cannot_be_used_say_why(tmp_path, content, problem):
    path = tmp_path / "m.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    with pytest.raises(ReplayError, match=problem.replace("[", r"\[").replace("]", r"\]")):
        load_replay(path)
