"""Device memory bandwidth (copy and STREAM-like triad) on every device, then the spread."""

import pytest

pytestmark = pytest.mark.perf

FIGURES = ["device_copy_gbps", "device_triad_gbps"]


@pytest.mark.parametrize("figure", FIGURES)
def test_memory_bandwidth(perf, perf_device, figure):
    perf.check(figure, perf_device)


@pytest.mark.parametrize("figure", FIGURES)
def test_memory_bandwidth_spread_across_devices(perf, perf_devices, figure):
    perf.spread(figure, perf_devices)
