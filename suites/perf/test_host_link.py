"""Host-device copies from pinned memory (pageable ones are reported beside them), per device."""

import pytest

pytestmark = pytest.mark.perf

FIGURES = ["h2d_pinned_gbps", "d2h_pinned_gbps"]


@pytest.mark.parametrize("figure", FIGURES)
def test_host_link(perf, perf_device, figure):
    perf.check(figure, perf_device)


@pytest.mark.parametrize("figure", FIGURES)
def test_host_link_spread_across_devices(perf, perf_devices, figure):
    perf.spread(figure, perf_devices)
