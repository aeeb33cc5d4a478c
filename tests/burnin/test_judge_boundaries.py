"""Every burn-in check's failure says what failed and what to do, in its own words.

Written against the survivors of `python tools/mutation.py burnin` (tests/mutation/
survivors.md): the replays assert which check fails and that it names the GPU; these assert each
check's headline and advice, on one trace that carries every fault the synthetic traces know
(rigcheck/burnin/synthetic.py) on a node one GPU larger than the trace loaded.
"""

from __future__ import annotations

import copy

from rigcheck.burnin.synthetic import FAULTS, good_trace

# check -> (headline, advice), as a user reads them under the failure.
SAYS = {
    "test_every_device_loaded": (
        "not every device ran the load",
        "A device that errors or is missing under load cannot be trusted with a job: check "
        "`nvidia-smi` and the kernel log (`dmesg | grep -i xid`).",
    ),
    "test_no_thermal_or_power_brake_slowdown": (
        "the GPU slowed itself down under load (holding at the power cap is normal; these are not)",
        "Thermal slowdown: check fans, airflow, inlet temperature and the heat sink. Power "
        "brake or hw_slowdown: the board's power delivery signalled a fault; ask the "
        "provider.",
    ),
    "test_sustained_clock_above_class_floor": (
        "the sustained clock under load is below the class's floor",
        "Look at `nvidia-smi -q -d PERFORMANCE,CLOCK` during load: a locked application "
        "clock, a power cap or throttling holds it down.",
    ),
    "test_clock_close_to_node_median": (
        "a GPU runs slower than the others under the same load",
        "Every job on this node waits for its slowest GPU: compare its cooling, power limit "
        "(`nvidia-smi -q -d POWER`) and VBIOS with the others.",
    ),
    "test_temperature_below_slowdown_threshold": (
        "the GPU ran too close to (or past) its slowdown temperature",
        "It will throttle on a warmer day or a longer job: check fans, airflow and the inlet "
        "temperature.",
    ),
    "test_power_reaches_fraction_of_tdp": (
        "the GPU cannot draw the power its class draws under this load",
        "Something holds it back: a lowered power limit (`nvidia-smi -q -d POWER`), a power "
        "brake, or a bad power connector.",
    ),
    "test_no_new_ecc_errors": (
        "ECC errors counted during the load",
        "Memory that fails under load fails in a job: reset the GPU, and if they recur ask "
        "for an RMA or another machine.",
    ),
    "test_no_new_row_remaps": (
        "memory rows were remapped during the load",
        "A pending remap needs a GPU reset; remaps under load mean failing memory: ask the "
        "provider.",
    ),
    "test_no_new_pcie_replays": (
        "PCIe replays beyond the limit during the load",
        "The link retransmits: reseat the card or riser, or check the slot (`nvidia-smi -q "
        "-d PCIE`, `lspci -vv` AER counters).",
    ),
    "test_no_xid_events": (
        "Xid events in the kernel log during the load",
        "Look each code up in NVIDIA's Xid catalogue; 48, 63, 64, 74, 79, 92, 94, 95 mean "
        "the GPU needs a reset or replacement.",
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
    trace = copy.deepcopy(good_trace())
    for fault, *_ in FAULTS.values():
        fault(trace)
    return trace


def test_each_failing_check_gives_its_headline_and_advice(judge_trace):
    _, cases = judge_trace(every_fault(), gpus=5)
    failed = {name: case for name, case in cases.items() if case.outcome == "failed"}
    expected = {name for _, name, also in FAULTS.values()} | {"test_every_device_loaded"}
    assert expected <= set(failed), sorted(failed)
    for name, case in failed.items():
        headline, advice = SAYS[name]
        assert f"{headline}:\n  " in case.message, (name, case.message)
        assert case.message.rstrip().endswith(advice), (name, case.message)
