"""What the burn-in and the measurement telemetry read through the real pynvml, per driver."""

from __future__ import annotations

import pynvml
import pytest

from rigcheck.burnin import counters as burnin_counters
from rigcheck.burnin.sampler import nvml_reader
from rigcheck.measure.telemetry import read_sample
from rigcheck.testing.nvml_sim import simulated_nvml


def first_handle():
    pynvml.nvmlInit()
    return pynvml.nvmlDeviceGetHandleByIndex(0)


@pytest.mark.parametrize("driver", ["R525", "R535", "R580"])
def test_burn_in_sampler_reads_clock_event_reasons_on_every_driver(driver):
    """R525 has only the throttle name of the call; the binding has both names."""
    with simulated_nvml("h100_hgx", driver) as lib:
        sample = nvml_reader(pynvml, first_handle())()
        pynvml.nvmlShutdown()
    assert not lib.crashes
    assert sample == {
        "clock_mhz": 345,
        "mem_clock_mhz": 2619,
        "power_w": 68.92,
        "temperature_c": 29,
        "reasons": ["gpu_idle"],
        "pcie_width": 16,
    }


@pytest.mark.parametrize("driver", ["R525", "R580"])
def test_measurement_telemetry_reads_one_sample(driver):
    with simulated_nvml("h100_hgx", driver):
        sample = read_sample(pynvml, first_handle())
        pynvml.nvmlShutdown()
    assert sample["sm_mhz"] == 345 and sample["sm_max_mhz"] == 1980
    assert sample["power_limit_w"] == 700.0


def test_burn_in_limits_and_counters_before_the_load():
    with simulated_nvml("h100_hgx", "R580"):
        h = first_handle()
        identity = burnin_counters.identity(pynvml, h)
        limits = burnin_counters.limits(pynvml, h)
        counts = burnin_counters.counters(pynvml, h)
        pynvml.nvmlShutdown()
    assert identity == {"name": "NVIDIA H100 80GB HBM3", "bus_id": "0000:53:00.0"}
    assert limits == {
        "clock_max_mhz": 1980,
        "power_limit_w": 700.0,
        "pcie_width_max": 16,
        "slowdown_temp_c": 87,
        "shutdown_temp_c": 92,
    }
    assert counts == {
        "ecc_uncorrected": 0,
        "ecc_corrected": 0,
        "remapped_rows_correctable": 0,
        "remapped_rows_uncorrectable": 0,
        "remap_pending": 0,
        "pcie_replays": 150,
    }


def test_burn_in_finds_each_torch_gpu_by_its_pci_bus_id():
    """record._cuda matches torch's GPU i to NVML by the bus id torch formats ("0000:53:00.0",
    a str): the binding encodes it and the library takes either domain width."""
    from types import SimpleNamespace

    from rigcheck.burnin import record

    buses = [0x53, 0x64]  # the capture's first two GPUs, in reverse to show the match
    props = [SimpleNamespace(pci_domain_id=0, pci_bus_id=b, pci_device_id=0) for b in buses[::-1]]
    torch = SimpleNamespace(
        __version__="2.13.0",
        version=SimpleNamespace(cuda="12.8", hip=None),  # a CUDA build, as the burn-in checks
        cuda=SimpleNamespace(device_count=lambda: 2, get_device_properties=lambda i: props[i]),
        device=lambda kind, i: f"{kind}:{i}",
    )
    with simulated_nvml("h100_hgx") as lib:
        backend = record._cuda(torch)
        pynvml.nvmlShutdown()
    assert not lib.crashes
    assert [e["bus_id"] for e in backend.entries] == ["0000:64:00.0", "0000:53:00.0"]
    assert backend.entries[0]["limits"]["power_limit_w"] == 700.0


def test_measurement_telemetry_goes_on_where_power_draw_is_not_readable():
    """A vGPU guest (profiles/machines/vgpu_a100.json) answers NotSupported for the power draw:
    the clocks, temperature and reasons of the run are still recorded."""
    from rigcheck.facts import Facts
    from rigcheck.measure.device import measured_devices
    from rigcheck.measure.telemetry import Telemetry, explain

    facts = Facts({"devices": [{"index": 0, "vendor": "nvidia", "name": "NVIDIA A100"}]})
    (device,) = measured_devices(facts, "cuda")
    with simulated_nvml("vgpu_a100") as lib, Telemetry(device, interval_s=0.001) as telemetry:
        while len(telemetry.samples) < 3 and telemetry.unavailable is None:
            pass
    assert not lib.crashes
    summary = telemetry.summary()
    assert summary["samples"] >= 3 and summary["unavailable"] is None, summary
    assert summary["power_w_max"] is None and summary["temperature_c_max"] == 33
    assert "power draw not readable" in explain(summary)
