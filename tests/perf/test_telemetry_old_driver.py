"""Telemetry on an R525-R530 driver (issue 10): nvidia-ml-py binds the R535 clock-event call,
the driver exports only the older throttle-reasons one; sampling must go on with it.

The real pynvml over a simulated R525 libnvidia-ml (rigcheck/testing/nvml_sim): the R535 symbol is
absent,
so the binding itself raises FunctionNotFound, as it does on such a driver."""

from perf_inputs import h100_facts

from rigcheck.facts import Facts
from rigcheck.measure.device import measured_devices
from rigcheck.measure.telemetry import Telemetry, explain
from rigcheck.testing.nvml_sim import machine_profile, simulated_nvml


def old_driver(mask: int, throttle_answer: str | None = None):
    machine = machine_profile("h100_hgx")
    machine["gpus"][0]["clock_event_reasons"] = mask
    if throttle_answer:
        machine["gpus"][0]["answers"] = {
            "nvmlDeviceGetCurrentClocksThrottleReasons": throttle_answer
        }
    return simulated_nvml(machine, "R525")


def sample(simulated, wanted: int = 5):
    (device,) = measured_devices(Facts(h100_facts(1)), "cuda")
    with simulated as lib, Telemetry(device, interval_s=0.001) as telemetry:
        while len(telemetry.samples) < wanted and telemetry.unavailable is None:
            pass
    assert not lib.crashes, lib.crashes
    return telemetry.summary()


def test_an_old_driver_keeps_sampling_through_the_throttle_reasons_call():
    summary = sample(old_driver(0x20))  # sw thermal slowdown
    assert summary["samples"] >= 5 and summary["unavailable"] is None, summary
    assert summary["throttle_reasons"] == ["sw_thermal_slowdown"]


def test_a_driver_whose_reads_fail_still_says_so():
    """The faulty case is not hidden: no samples, and the reason names the failed read."""
    summary = sample(old_driver(0, throttle_answer="UNKNOWN"))
    assert summary["samples"] == 0
    assert "NVML read failed: NVMLError_Unknown: Unknown Error" in explain(summary)
