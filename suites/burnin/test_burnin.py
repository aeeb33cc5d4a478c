"""Under sustained load: thermal and power behaviour, clocks, errors, correctness, throughput.

Judged on the burn-in trace (--burn-in=DUR records one live, --burn-in-trace=FILE replays one).
"""

import pytest

from rigcheck.burnin import judge
from rigcheck.burnin.verdicts import judged, report

pytestmark = pytest.mark.burn_in


def test_every_device_loaded(request, burn_in_trace, facts):
    """Every GPU of the node: as many as --gpus says, else as many as the facts list."""
    gpus = request.config.getoption("--gpus")
    expected = None if burn_in_trace["backend"] == "cpu" else (gpus or len(facts.devices))
    report(
        judged(burn_in_trace, judge.devices_loaded, expected),
        "not every device ran the load",
        "A device that errors or is missing under load cannot be trusted with a job: check "
        "`nvidia-smi` (`amd-smi` on AMD GPUs) and the kernel log (`dmesg | grep -i xid`, "
        "`dmesg | grep amdgpu`).",
    )


def test_no_thermal_or_power_brake_slowdown(burn_in_trace, burn_in_limits):
    report(
        judged(burn_in_trace, judge.slowdown, burn_in_limits),
        "the GPU slowed itself down under load (holding at the power cap is normal; these are not)",
        "Thermal slowdown: check fans, airflow, inlet temperature and the heat sink. Power brake "
        "or hw_slowdown: the board's power delivery signalled a fault; ask the provider.",
    )


def test_sustained_clock_above_class_floor(burn_in_trace, burn_in_limits):
    report(
        judged(burn_in_trace, judge.clock_floor, burn_in_limits),
        "the sustained clock under load is below the class's floor",
        "Look at `nvidia-smi -q -d PERFORMANCE,CLOCK` (`amd-smi metric --clock`) during load: a "
        "locked application clock, a power cap or throttling holds it down.",
    )


def test_clock_close_to_node_median(burn_in_trace, burn_in_limits):
    report(
        judged(burn_in_trace, judge.clock_spread, burn_in_limits),
        "a GPU runs slower than the others under the same load",
        "Every job on this node waits for its slowest GPU: compare its cooling, power limit "
        "(`nvidia-smi -q -d POWER`, `amd-smi static --limit`) and VBIOS with the others.",
    )


def test_pcie_width_under_load(burn_in_trace, platform_width, target):
    """The width read while the load ran (an idle reading may narrow; this one may not)."""
    where = f"platform {target.platform}" + (f", wired x{platform_width}" if platform_width else "")
    report(
        judged(burn_in_trace, judge.link_width, platform_width),
        f"the PCIe link stayed narrow under load (judged: the burn-in's readings; {where})",
        "A link that trains narrow while data flows halves host-device bandwidth: reseat the "
        "card, check the riser and the BIOS lane settings; on a cloud VM whose platform wires "
        "fewer lanes, name it with --platform.",
    )


def test_temperature_below_slowdown_threshold(burn_in_trace, burn_in_limits):
    report(
        judged(burn_in_trace, judge.temperature, burn_in_limits),
        "the GPU ran too close to (or past) its slowdown temperature",
        "It will throttle on a warmer day or a longer job: check fans, airflow and the inlet "
        "temperature.",
    )


def test_power_reaches_fraction_of_tdp(burn_in_trace, burn_in_limits):
    report(
        judged(burn_in_trace, judge.power, burn_in_limits),
        "the GPU cannot draw the power its class draws under this load",
        "Something holds it back: a lowered power limit (`nvidia-smi -q -d POWER`, `amd-smi "
        "static --limit`), a power brake, or a bad power connector.",
    )


def test_no_new_ecc_errors(burn_in_trace, burn_in_limits):
    report(
        judged(burn_in_trace, judge.counters, burn_in_limits, "ecc"),
        "ECC errors counted during the load",
        "Memory that fails under load fails in a job: reset the GPU, and if they recur ask "
        "for an RMA or another machine.",
    )


def test_no_new_row_remaps(burn_in_trace, burn_in_limits):
    report(
        judged(burn_in_trace, judge.counters, burn_in_limits, "remaps"),
        "memory rows were remapped (HBM pages retired, on AMD GPUs) during the load",
        "A pending remap or page retirement needs a GPU reset; either under load means failing "
        "memory: ask the provider.",
    )


def test_no_new_pcie_replays(burn_in_trace, burn_in_limits):
    report(
        judged(burn_in_trace, judge.counters, burn_in_limits, "pcie"),
        "PCIe replays beyond the limit during the load",
        "The link retransmits: reseat the card or riser, or check the slot "
        "(`nvidia-smi -q -d PCIE`, `lspci -vv` AER counters).",
    )


def test_no_xid_events(burn_in_trace, burn_in_limits):
    report(
        judged(burn_in_trace, judge.xid, burn_in_limits),
        "Xid events in the kernel log during the load",
        "Each line names NVIDIA's immediate action for its code (Xid catalogue, "
        "rigcheck/facts/kernel_log/xid_catalog.py): RESET_GPU and RESTART_BM mean a reset or a "
        "reboot, then a replacement if it recurs.",
    )


def test_no_nvrm_fault_records(burn_in_trace, burn_in_limits):
    report(
        judged(burn_in_trace, judge.nvrm, burn_in_limits),
        "NVIDIA driver fault records (NVRM, no Xid needed) in the kernel log during the load",
        "Each line names the GPU and what to do (rigcheck/facts/kernel_log/nvrm.py): a GPU fallen "
        "off the bus or one the driver cannot initialize is unusable until the node is drained "
        "and rebooted.",
    )


def test_gemm_bit_identical_across_repeats(burn_in_trace):
    report(
        judged(burn_in_trace, judge.gemm_repeats),
        "the same GEMM on the same inputs gave different bits: silent data corruption",
        "This GPU computes wrong answers under load: take it out of service and ask for a "
        "replacement.",
    )


def test_gemm_bit_identical_across_devices(burn_in_trace):
    report(
        judged(burn_in_trace, judge.gemm_across_devices),
        "GPUs of one model disagree on the same GEMM on the same inputs",
        "The one that differs from the others computes wrong answers: take it out of service.",
    )


def test_memory_pattern_test_clean(burn_in_trace, burn_in_limits):
    report(
        judged(burn_in_trace, judge.memory_pattern, burn_in_limits),
        "the memory pattern test read back wrong words (or covered too little)",
        "Device memory that returns wrong data corrupts jobs silently: reset the GPU and run "
        "again; if it recurs, ask for a replacement.",
    )


def test_throughput_holds(burn_in_trace, burn_in_limits):
    report(
        judged(burn_in_trace, judge.throughput, burn_in_limits),
        "GEMM throughput fell under sustained load",
        "Heat soak or throttling: compare the clocks and temperature over time in report.html.",
    )
