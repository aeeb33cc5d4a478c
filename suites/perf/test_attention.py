"""Attention throughput: torch SDPA's flash backend and flash-attn's kernel, per device."""

import pytest

pytestmark = pytest.mark.perf

FIGURES = ["attention_sdpa_tflops", "attention_flash_attn_tflops"]


@pytest.mark.parametrize("figure", FIGURES)
def test_attention_tflops(perf, perf_device, figure):
    perf.check(figure, perf_device)


@pytest.mark.parametrize("figure", FIGURES)
def test_attention_spread_across_devices(perf, perf_devices, figure):
    perf.spread(figure, perf_devices)
