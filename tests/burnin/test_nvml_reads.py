"""The NVIDIA side of the recorder against a fake pynvml (CI has no GPU): what one sample, the
limits and the counters read, and that a failed or unsupported read is null or a reason."""

from __future__ import annotations

import types

import pynvml
import pytest

from rigcheck.burnin import counters as nv
from rigcheck.burnin import judge
from rigcheck.burnin.sampler import nvml_reader


def not_supported(*_args):
    raise pynvml.NVMLError_NotSupported()


def lost(*_args):
    raise pynvml.NVMLError_GpuIsLost()


def fake_nvml(**overrides):
    """An H100 under load: 1,755 MHz, 690 W, 71 C, capped at its power limit."""
    calls = {
        "nvmlDeviceGetClockInfo": lambda h, c: {"sm": 1755, "mem": 2619}[c],
        "nvmlDeviceGetMaxClockInfo": lambda h, c: 1980,
        "nvmlDeviceGetPowerUsage": lambda h: 690_000,
        "nvmlDeviceGetTemperature": lambda h, s: 71,
        "nvmlDeviceGetCurrentClocksEventReasons": lambda h: 0x4,
        "nvmlDeviceGetEnforcedPowerLimit": lambda h: 700_000,
        "nvmlDeviceGetTemperatureThreshold": lambda h, w: {"slow": 87, "shut": 92}[w],
        "nvmlDeviceGetTotalEccErrors": lambda h, kind, counter: {"unc": 0, "cor": 3}[kind],
        "nvmlDeviceGetRemappedRows": lambda h: (1, 0, False, False),
        "nvmlDeviceGetPcieReplayCounter": lambda h: 0,
        "nvmlDeviceGetName": lambda h: b"NVIDIA H100 80GB HBM3",
        "nvmlDeviceGetPciInfo": lambda h: types.SimpleNamespace(busId=b"00000000:18:00.0"),
    }
    calls.update(overrides)
    return types.SimpleNamespace(
        **calls,
        NVML_CLOCK_SM="sm",
        NVML_CLOCK_MEM="mem",
        NVML_TEMPERATURE_GPU=0,
        NVML_TEMPERATURE_THRESHOLD_SLOWDOWN="slow",
        NVML_TEMPERATURE_THRESHOLD_SHUTDOWN="shut",
        NVML_MEMORY_ERROR_TYPE_UNCORRECTED="unc",
        NVML_MEMORY_ERROR_TYPE_CORRECTED="cor",
        NVML_VOLATILE_ECC=0,
    )


def test_one_sample():
    row = nvml_reader(fake_nvml(), "h0")()
    assert row == {
        "clock_mhz": 1755,
        "mem_clock_mhz": 2619,
        "power_w": 690.0,
        "temperature_c": 71,
        "reasons": ["sw_power_cap"],
    }


def test_a_failed_read_is_null_in_its_column_only():
    row = nvml_reader(fake_nvml(nvmlDeviceGetPowerUsage=lost), "h0")()
    assert row["power_w"] is None and row["clock_mhz"] == 1755


def test_limits_and_identity():
    nvml = fake_nvml()
    assert nv.limits(nvml, "h0") == {
        "clock_max_mhz": 1980,
        "power_limit_w": 700.0,
        "slowdown_temp_c": 87,
        "shutdown_temp_c": 92,
    }
    assert nv.identity(nvml, "h0") == {
        "name": "NVIDIA H100 80GB HBM3",
        "bus_id": "00000000:18:00.0",
    }


def test_counters():
    assert nv.counters(fake_nvml(), "h0") == {
        "ecc_uncorrected": 0,
        "ecc_corrected": 3,
        "remapped_rows_correctable": 1,
        "remapped_rows_uncorrectable": 0,
        "remap_pending": 0,
        "pcie_replays": 0,
    }


def test_no_row_remapping_before_ampere_is_none_for_all_three():
    read = nv.counters(fake_nvml(nvmlDeviceGetRemappedRows=not_supported), "h0")
    assert [read[k] for k in read if k.startswith("remap")] == [None, None, None]


def test_an_unreadable_counter_fails_its_check_closed():
    from rigcheck.burnin.limits import Limits
    from rigcheck.burnin.synthetic import good_trace
    from rigcheck.spec import load_spec

    trace = good_trace(duration_s=30.0)
    trace["devices"][0]["counters_after"] = nv.counters(
        fake_nvml(nvmlDeviceGetPcieReplayCounter=lost), "h0"
    )
    with pytest.raises(judge.CannotJudge, match="pcie_replays after the load"):
        judge.counters(trace, Limits(load_spec("h100")), "pcie")
