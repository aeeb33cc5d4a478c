"""AMD GPUs at idle through amdsmi: temperature against the GPU's own thresholds (the NVIDIA
counterpart is test_idle_state.py's, with the same margin from the class's spec)."""

import pytest

from rigcheck.limits import health_limit
from rigcheck.require import device_value, gpu_label, shown

pytestmark = pytest.mark.facts


@pytest.fixture
def amd_gpus(spec, devices):
    if spec.vendor != "amd":
        pytest.skip(f"AMD idle state through amdsmi: {spec.name} is {spec.vendor}")
    return devices


def test_amd_idle_temperature_below_slowdown(spec, amd_gpus):
    margin = health_limit(spec, "idle_temperature_margin_c")
    hot = []
    for d in amd_gpus:
        device_value(d, "amd_temperature", required=True)
        temp = device_value(d, "amd_temperature.hotspot_c")
        slowdown = device_value(d, "amd_temperature.slowdown_c")
        if temp > slowdown - margin:
            shutdown = shown(d, "amd_temperature.shutdown_c")
            hot.append(f"{gpu_label(d)}: hotspot {temp} C (slows down at {slowdown} C, shuts "
                       f"down at {shutdown} C)")  # fmt: skip
    assert not hot, (
        f"GPUs hot at idle, within {margin:.0f} C of their slowdown threshold: {'; '.join(hot)}. "
        "Under load they will throttle or shut down: check fans, airflow and the inlet "
        "temperature (`amd-smi metric --temperature`, `amd-smi static --limit`), or ask the "
        "provider."
    )
