"""The NVIDIA side of the recorder through the real pynvml over a simulated libnvidia-ml
(rigcheck/testing/nvml_sim; CI has no GPU): what one sample, the limits and the counters read, and
that a
failed or unsupported read is null or a reason."""

from __future__ import annotations

import pynvml
import pytest

from rigcheck.burnin import counters as nv
from rigcheck.burnin import judge
from rigcheck.burnin.sampler import nvml_reader
from rigcheck.testing.nvml_sim import machine_profile, on_gpu


def under_load(**answers):
    """An H100 under load: 1,755 MHz, 690 W, 71 C, capped at its power limit; `answers` maps a
    C symbol to the return code it gives instead (NOT_SUPPORTED, GPU_IS_LOST...)."""
    machine = machine_profile("h100_hgx")
    gpu = machine["gpus"][0]
    gpu["clocks"].update(sm=1755, mem=2619)
    gpu["power"]["draw_mw"] = 690_000
    gpu["temperature_c"] = 71
    gpu["clock_event_reasons"] = 0x4
    gpu["ecc_errors"]["dram_corrected_volatile"] = 3
    gpu["remapped_rows"]["correctable"] = 1
    gpu["pcie"]["replays"] = 0
    gpu["answers"] = answers
    return machine


def test_one_sample():
    row = on_gpu(under_load(), lambda h: nvml_reader(pynvml, h)())
    assert row == {
        "clock_mhz": 1755,
        "mem_clock_mhz": 2619,
        "power_w": 690.0,
        "temperature_c": 71,
        "reasons": ["sw_power_cap"],
        "pcie_width": 16,  # the width under load, judged against the max (judge.link_width)
    }


def test_a_failed_read_is_null_in_its_column_only():
    machine = under_load(nvmlDeviceGetPowerUsage="GPU_IS_LOST")
    row = on_gpu(machine, lambda h: nvml_reader(pynvml, h)())
    assert row["power_w"] is None and row["clock_mhz"] == 1755


def test_limits_and_identity():
    assert on_gpu(under_load(), lambda h: nv.limits(pynvml, h)) == {
        "clock_max_mhz": 1980,
        "power_limit_w": 700.0,
        "pcie_width_max": 16,
        "slowdown_temp_c": 87,
        "shutdown_temp_c": 92,
    }
    assert on_gpu(under_load(), lambda h: nv.identity(pynvml, h)) == {
        "name": "NVIDIA H100 80GB HBM3",
        "bus_id": "0000:53:00.0",
    }


def test_counters():
    assert on_gpu(under_load(), lambda h: nv.counters(pynvml, h)) == {
        "ecc_uncorrected": 0,
        "ecc_corrected": 3,
        "remapped_rows_correctable": 1,
        "remapped_rows_uncorrectable": 0,
        "remap_pending": 0,
        "pcie_replays": 0,
    }


def test_no_row_remapping_before_ampere_is_none_for_all_three():
    machine = under_load(nvmlDeviceGetRemappedRows="NOT_SUPPORTED")
    read = on_gpu(machine, lambda h: nv.counters(pynvml, h))
    assert [read[k] for k in read if k.startswith("remap")] == [None, None, None]


def test_an_unreadable_counter_fails_its_check_closed():
    from rigcheck.burnin.limits import Limits
    from rigcheck.spec import load_spec
    from rigcheck.testing.synthetic_trace import good_trace

    trace = good_trace(duration_s=30.0)
    machine = under_load(nvmlDeviceGetPcieReplayCounter="GPU_IS_LOST")
    trace["devices"][0]["counters_after"] = on_gpu(machine, lambda h: nv.counters(pynvml, h))
    with pytest.raises(judge.CannotJudge, match="pcie_replays after the load"):
        judge.counters(trace, Limits(load_spec("h100")), "pcie")
