"""Every burn-in check's failure says what failed and what to do, in its own words.

Written against the survivors of `python tools/mutation.py burnin` (tests/mutation/
survivors.md): the replays assert which check fails and that it names the GPU; these assert each
check's headline and advice, on one trace that carries every fault the synthetic traces know
(rigcheck/testing/synthetic_trace.py) on a node one GPU larger than the trace loaded.
"""

from __future__ import annotations

import copy

import pytest

from rigcheck.burnin import judge
from rigcheck.burnin.limits import Limits
from rigcheck.spec import Spec, load_spec
from rigcheck.testing.synthetic_trace import FAULTS, good_trace

# check -> (headline, advice), as a user reads them under the failure.
SAYS = {
    "test_every_device_loaded": (
        "not every device ran the load",
        "A device that errors or is missing under load cannot be trusted with a job: check "
        "`nvidia-smi` (`amd-smi` on AMD GPUs) and the kernel log (`dmesg | grep -i xid`, "
        "`dmesg | grep amdgpu`).",
    ),
    "test_no_thermal_or_power_brake_slowdown": (
        "the GPU slowed itself down under load (holding at the power cap is normal; these are not)",
        "Thermal slowdown: check fans, airflow, inlet temperature and the heat sink. Power "
        "brake or hw_slowdown: the board's power delivery signalled a fault; ask the "
        "provider.",
    ),
    "test_sustained_clock_above_class_floor": (
        "the sustained clock under load is below the class's floor",
        "Look at `nvidia-smi -q -d PERFORMANCE,CLOCK` (`amd-smi metric --clock`) during load: a "
        "locked application clock, a power cap or throttling holds it down.",
    ),
    "test_clock_close_to_node_median": (
        "a GPU runs slower than the others under the same load",
        "Every job on this node waits for its slowest GPU: compare its cooling, power limit "
        "(`nvidia-smi -q -d POWER`, `amd-smi static --limit`) and VBIOS with the others.",
    ),
    "test_temperature_below_slowdown_threshold": (
        "the GPU ran too close to (or past) its slowdown temperature",
        "It will throttle on a warmer day or a longer job: check fans, airflow and the inlet "
        "temperature.",
    ),
    "test_power_reaches_fraction_of_tdp": (
        "the GPU cannot draw the power its class draws under this load",
        "Something holds it back: a lowered power limit (`nvidia-smi -q -d POWER`, `amd-smi "
        "static --limit`), a power brake, or a bad power connector.",
    ),
    "test_no_new_ecc_errors": (
        "ECC errors counted during the load",
        "Memory that fails under load fails in a job: reset the GPU, and if they recur ask "
        "for an RMA or another machine.",
    ),
    "test_no_new_row_remaps": (
        "memory rows were remapped (HBM pages retired, on AMD GPUs) during the load",
        "A pending remap or page retirement needs a GPU reset; either under load means failing "
        "memory: ask the provider.",
    ),
    "test_no_new_pcie_replays": (
        "PCIe replays beyond the limit during the load",
        "The link retransmits: reseat the card or riser, or check the slot (`nvidia-smi -q "
        "-d PCIE`, `lspci -vv` AER counters).",
    ),
    "test_no_xid_events": (
        "Xid events in the kernel log during the load",
        "Each line names NVIDIA's immediate action for its code (Xid catalogue, "
        "rigcheck/facts/kernel_log/xid_catalog.py): RESET_GPU and RESTART_BM mean a reset or a "
        "reboot, then a replacement if it recurs.",
    ),
    "test_no_nvrm_fault_records": (
        "NVIDIA driver fault records (NVRM, no Xid needed) in the kernel log during the load",
        "Each line names the GPU and what to do (rigcheck/facts/kernel_log/nvrm.py): a GPU fallen "
        "off the bus or one the driver cannot initialize is unusable until the node is drained "
        "and rebooted.",
    ),
    "test_gemm_bit_identical_across_repeats": (
        "the same GEMM on the same inputs gave different bits: silent data corruption",
        "This GPU computes wrong answers under load: take it out of service and ask for a "
        "replacement.",
    ),
    "test_gemm_bit_identical_across_devices": (
        "GPUs of one model disagree on the same GEMM on the same inputs",
        "The one that differs from the others computes wrong answers: take it out of service.",
    ),
    "test_memory_pattern_test_clean": (
        "the memory pattern test read back wrong words (or covered too little)",
        "Device memory that returns wrong data corrupts jobs silently: reset the GPU and run "
        "again; if it recurs, ask for a replacement.",
    ),
    "test_throughput_holds": (
        "GEMM throughput fell under sustained load",
        "Heat soak or throttling: compare the clocks and temperature over time in report.html.",
    ),
}


def every_fault() -> dict:
    """Every synthetic fault, and two more: a GPU's clock far below the floor, a row remap."""
    trace = copy.deepcopy(good_trace())
    for fault, *_ in FAULTS.values():
        fault(trace)
    slow = trace["devices"][2]["samples"]
    slow["clock_mhz"] = [100 for _ in slow["clock_mhz"]]
    trace["devices"][3]["counters_after"]["remapped_rows_uncorrectable"] += 1
    return trace


def test_each_failing_check_gives_its_headline_and_advice(judge_trace):
    _, cases = judge_trace(every_fault(), gpus=5)
    failed = {name: case for name, case in cases.items() if case.outcome == "failed"}
    expected = {name for _, name, also in FAULTS.values()} | {
        "test_every_device_loaded",
        "test_sustained_clock_above_class_floor",
        "test_no_new_row_remaps",
    }
    assert expected <= set(failed), sorted(failed)
    for name, case in failed.items():
        headline, advice = SAYS[name]
        assert f"{headline}:\n  " in case.message, (name, case.message)
        assert case.message.rstrip().endswith(advice), (name, case.message)


# ---- the judges on their own, at their edges (rigcheck/burnin/judge.py) ----

GPU0 = "gpu0 (NVIDIA H100 80GB HBM3, 0000:18:00.0)"
H100 = Limits(load_spec("h100"))


def short_trace() -> dict:
    return copy.deepcopy(good_trace(duration_s=60.0, interval_s=0.5))


def test_a_column_not_recorded_says_why():
    trace = short_trace()
    device = trace["devices"][0]
    del device["samples"]["power_w"]
    with pytest.raises(judge.NotAvailable) as err:
        judge.series(trace, device, "power_w")
    assert str(err.value) == f"{GPU0}: power_w not recorded: not in the trace"
    trace["unavailable"] = {"power_w": "NVML_ERROR_NOT_SUPPORTED"}
    with pytest.raises(judge.NotAvailable) as err:
        judge.series(trace, device, "power_w")
    assert str(err.value) == f"{GPU0}: power_w not recorded: NVML_ERROR_NOT_SUPPORTED"


def test_a_window_includes_both_ends_and_an_empty_one_is_named():
    trace = short_trace()
    device = trace["devices"][0]
    points = judge.series(trace, device, "power_w", (10.0, 12.0))
    assert [t for t, _ in points] == [10.0, 10.5, 11.0, 11.5, 12.0]
    with pytest.raises(judge.CannotJudge) as err:
        judge.series(trace, device, "power_w", (100.0, 200.0))
    assert str(err.value) == f"{GPU0}: no power_w samples in 100-200 s"


def test_a_column_of_failed_readings_blames_the_sampler():
    trace = short_trace()
    device = trace["devices"][0]
    device["samples"]["power_w"] = [None] * len(device["samples"]["t_s"])
    with pytest.raises(judge.CannotJudge) as err:
        judge.series(trace, device, "power_w")
    assert str(err.value) == (
        f"{GPU0}: 121 of 121 power_w readings failed or are not numbers; the sampler could not "
        "read the GPU (check `nvidia-smi -q`, or `amd-smi metric` on AMD GPUs)"
    )


def test_checksums_across_devices_per_model_and_without_a_majority():
    trace = short_trace()
    one = copy.deepcopy(trace)
    one["devices"] = one["devices"][:1]
    with pytest.raises(judge.NotApplicable) as err:
        judge.gemm_across_devices(one)
    assert str(err.value) == "no two devices of one model: nothing to compare across"
    for d in trace["devices"][2:]:
        d["name"] = "NVIDIA H200"  # two models, two devices each
    trace["devices"][1]["windows"]["checksum"] = [7]
    trace["devices"][3]["windows"]["checksum"] = [7]
    assert judge.gemm_across_devices(trace) == [
        "NVIDIA H100 80GB HBM3: no majority checksum among 2 devices",
        "NVIDIA H200: no majority checksum among 2 devices",
    ]
    trace["devices"][0]["windows"]["checksum"] = []
    with pytest.raises(judge.CannotJudge) as err:
        judge.gemm_across_devices(trace)
    assert str(err.value) == "a device recorded no GEMM checksum"


def test_a_differing_device_is_named_in_every_model():
    trace = short_trace()
    for d in trace["devices"]:
        d["windows"]["checksum"] = [1]
    trace["devices"] += copy.deepcopy(trace["devices"][:3])
    for i, d in enumerate(trace["devices"][4:]):
        d.update(name="NVIDIA H200", id=f"gpu{4 + i}", bus_id=None)
    trace["devices"][1]["windows"]["checksum"] = [2]
    trace["devices"][6]["windows"]["checksum"] = [3]
    assert judge.gemm_across_devices(trace) == [
        f"gpu1 (NVIDIA H100 80GB HBM3, {trace['devices'][1]['bus_id']}): checksum 2 differs "
        "from 1 on the other 3 NVIDIA H100 80GB HBM3 devices",
        "gpu6 (NVIDIA H200): checksum 3 differs from 1 on the other 2 NVIDIA H200 devices",
    ]


def test_no_expected_count_and_zero_expected_add_nothing():
    trace = short_trace()
    assert judge.devices_loaded(trace, None) == []
    assert judge.devices_loaded(trace, 0) == []
    assert judge.devices_loaded(trace, 5) == ["the trace loaded 4 devices, the node has 5"]


def test_a_throughput_drop_is_measured_against_the_first_third_of_a_short_load():
    """A 60 s trace: the load window is 5-50 s, its baseline the first 15 s of it."""
    trace = short_trace()
    w = trace["devices"][0]["windows"]
    w["tflops"] = [v if t <= 20 else v / 2 for t, v in zip(w["t_s"], w["tflops"], strict=True)]
    assert judge.throughput(trace, H100) == [
        f"{GPU0}: 349.40 TFLOP/s around 33 s, 50% below its first 15 s (702.16); limit 10%"
    ]


def test_a_counter_missing_from_the_trace_is_named():
    trace = short_trace()
    device = trace["devices"][0]
    name = next(iter(judge.COUNTERS["ecc"]))
    del device["counters_before"][name]
    with pytest.raises(judge.CannotJudge) as err:
        judge.counters(trace, H100, "ecc")
    assert str(err.value) == f"{GPU0}: {name} before the load: not in the trace"


def test_the_first_later_stretch_always_counts_even_when_the_windows_stop_early():
    """Windows that end 5 s after the baseline: one stretch, the median of all five
    (700, 100, 100, 700, 700: 700), not of the last four (400: a false 43% drop)."""
    trace = short_trace()
    w = trace["devices"][0]["windows"]
    keep = [i for i, t in enumerate(w["t_s"]) if t <= 25]
    for key in ("t_s", "tflops", "checksum", "checks", "mismatches"):
        if isinstance(w.get(key), list):
            w[key] = [w[key][i] for i in keep]
    w["tflops"] = [100.0 if t in (22, 23) else 700.0 for t in w["t_s"]]
    assert judge.throughput(trace, H100) == []


def test_clock_event_reasons_not_recorded_say_why():
    trace = short_trace()
    del trace["devices"][0]["samples"]["reasons"]
    trace["unavailable"] = {"reasons": "NVML_ERROR_NOT_SUPPORTED"}
    with pytest.raises(judge.NotAvailable) as err:
        judge.slowdown(trace, H100)
    assert str(err.value) == (f"{GPU0}: clock event reasons not recorded: NVML_ERROR_NOT_SUPPORTED")


def test_slowdown_within_a_class_s_allowance_passes_and_half_failed_readings_still_judge():
    """A spec may allow some slowdown (the shipped ones allow none): 1 sample of 121 under a
    5% allowance passes. Exactly half the reason readings failed is not yet "most"."""
    spec = load_spec("h100")
    data = copy.deepcopy(spec.data)
    data["burn_in"]["slowdown_fraction_max"]["value"] = 0.05
    lenient = Limits(Spec(data, spec.path))
    trace = short_trace()
    reasons = trace["devices"][0]["samples"]["reasons"]
    reasons[30] = ["hw_slowdown"]
    assert judge.slowdown(trace, lenient) == []
    assert judge.slowdown(trace, H100) == [
        f"{GPU0}: hw_slowdown in 1 of 121 samples, first at 15 s"
    ]
    trace = short_trace()
    reasons = trace["devices"][0]["samples"]["reasons"]
    reasons[: len(reasons) // 2] = [None] * (len(reasons) // 2)
    reasons.pop()  # 120 readings, 60 failed: half, not more
    trace["devices"][0]["samples"]["t_s"].pop()
    for column in ("clock_mhz", "mem_clock_mhz", "power_w", "temperature_c"):
        trace["devices"][0]["samples"][column].pop()
    assert judge.slowdown(trace, H100) == []


def test_a_final_window_exactly_at_the_end_of_the_load_counts():
    """GEMM windows only in the baseline and one at the load's last second (50 s)."""
    trace = short_trace()
    w = trace["devices"][0]["windows"]
    keep = [i for i, t in enumerate(w["t_s"]) if t <= 20 or t == 50]
    for key, values in w.items():
        w[key] = [values[i] for i in keep]
    assert judge.throughput(trace, H100) == []


def windows_only(trace: dict, keep) -> dict:
    w = trace["devices"][0]["windows"]
    kept = [i for i, t in enumerate(w["t_s"]) if keep(t)]
    for key, values in w.items():
        w[key] = [values[i] for i in kept]
    return w


def test_the_last_baseline_window_is_not_also_a_later_one():
    """Baseline 5-20 s at ~700 TFLOP/s, then one window at 21 s at 100: judged alone."""
    trace = short_trace()
    w = windows_only(trace, lambda t: t <= 21)
    w["tflops"][-1] = 100.0
    (problem,) = judge.throughput(trace, H100)
    assert problem.startswith(f"{GPU0}: 100.00 TFLOP/s around 21 s, 86% below its first 15 s")


def test_no_window_after_the_baseline_cannot_be_judged():
    trace = short_trace()
    windows_only(trace, lambda t: t <= 20)
    with pytest.raises(judge.CannotJudge) as err:
        judge.throughput(trace, H100)
    assert str(err.value) == f"{GPU0}: too few GEMM windows to compare (16)"
