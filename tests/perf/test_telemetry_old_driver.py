"""Telemetry on an R525-R530 driver (issue 10): nvidia-ml-py binds the R535 clock-event call,
the driver exports only the older throttle-reasons one; sampling must go on with it."""

import sys

from perf_inputs import h100_facts
from test_judging_parts import fake_nvml

from rigcheck.facts import Facts
from rigcheck.measure.device import measured_devices
from rigcheck.measure.telemetry import Telemetry, explain


class NVMLError(Exception):
    pass


class FunctionNotFound(NVMLError):
    pass


def old_driver_nvml(mask: int, throttle_call_works: bool = True):
    nvml = fake_nvml(0)
    nvml.NVMLError, nvml.NVMLError_FunctionNotFound = NVMLError, FunctionNotFound
    nvml.NVMLLibraryMismatchError = type("NVMLLibraryMismatchError", (Exception,), {})

    def event_reasons(handle):
        raise FunctionNotFound("Function Not Found")  # the driver has no such symbol

    def throttle_reasons(handle):
        if not throttle_call_works:
            raise NVMLError("Unknown Error")
        return mask

    nvml.nvmlDeviceGetCurrentClocksEventReasons = event_reasons
    nvml.nvmlDeviceGetCurrentClocksThrottleReasons = throttle_reasons
    return nvml


def sample(monkeypatch, nvml, wanted: int = 5):
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    (device,) = measured_devices(Facts(h100_facts(1)), "cuda")
    with Telemetry(device, interval_s=0.001) as telemetry:
        while len(telemetry.samples) < wanted and telemetry.unavailable is None:
            pass
    return telemetry.summary()


def test_an_old_driver_keeps_sampling_through_the_throttle_reasons_call(monkeypatch):
    summary = sample(monkeypatch, old_driver_nvml(0x20))  # sw thermal slowdown
    assert summary["samples"] >= 5 and summary["unavailable"] is None, summary
    assert summary["throttle_reasons"] == ["sw_thermal_slowdown"]


def test_a_driver_whose_reads_fail_still_says_so(monkeypatch):
    """The faulty case is not hidden: no samples, and the reason names the failed read."""
    summary = sample(monkeypatch, old_driver_nvml(0, throttle_call_works=False))
    assert summary["samples"] == 0
    assert "NVML read failed: NVMLError: Unknown Error" in explain(summary)
