"""Matrix-multiply throughput per precision on every device, then the spread across devices."""

import pytest

from rigcheck.measure.matmul import PRECISIONS

pytestmark = pytest.mark.perf


@pytest.mark.parametrize("precision", PRECISIONS)
def test_matmul_tflops(perf, perf_device, precision):
    perf.check(f"matmul_{precision}_tflops", perf_device)


@pytest.mark.parametrize("precision", PRECISIONS)
def test_matmul_spread_across_devices(perf, perf_devices, precision):
    perf.spread(f"matmul_{precision}_tflops", perf_devices)
