"""A small transformer training step: tokens/s and model FLOPs utilisation, per device."""

import pytest

pytestmark = pytest.mark.perf


def test_train_step_tokens_per_s(perf, perf_device):
    perf.check("train_step_tokens_per_s", perf_device)


def test_train_step_spread_across_devices(perf, perf_devices):
    perf.spread("train_step_tokens_per_s", perf_devices)
