"""AMD GPUs at idle through amdsmi: temperature against the GPU's own thresholds (the NVIDIA
counterpart is test_idle_state.py's, with the same margin from the class's spec), and no power
or thermal limit holding the clocks down (NVIDIA's: test_health.py::test_no_throttle_at_idle)."""

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


# What holds an idle GPU down, per amdsmi's violation kinds (AMD SMI "GPU violations": PVIOL is
# power, TVIOL and PROCHOT thermal), and what to look at.
VIOLATION_ADVICE = {
    "prochot": "processor hot asserted (an emergency thermal or platform signal)",
    "ppt_power": "at its package power limit while idle (a lowered cap, or the platform's)",
    "socket_thermal": "socket over its thermal limit",
    "vr_thermal": "a voltage regulator over its thermal limit",
    "hbm_thermal": "HBM over its thermal limit",
}


def test_amd_no_violation_at_idle(amd_gpus):
    """An idle GPU held down by a power or thermal limit now (amdsmi_get_violation_status's
    active flags) will run slow under load: a failing power supply, a platform's power brake, a
    blocked fan. Only the flags are judged: the percentages cover recent time and may still
    show the last job's load."""
    held, unreported = [], []
    for d in amd_gpus:
        if device_value(d, "amd_violation") is None:
            unreported.append(gpu_label(d))
            continue
        active = device_value(d, "amd_violation.active")
        percent = device_value(d, "amd_violation.percent")
        now = sorted(kind for kind, on in active.items() if on)
        if now:
            shares = ", ".join(f"{k} ({VIOLATION_ADVICE[k]}, {percent.get(k)}%)" for k in now)
            held.append(f"{gpu_label(d)}: {shares}")
    assert not held, (
        f"GPUs held down at idle by a power or thermal limit: {'; '.join(held)}. Under load "
        "they run slow: `amd-smi metric --violation` shows which; check the power supplies, "
        "fans and inlet temperature, or ask the provider."
    )
    if unreported and len(unreported) == len(amd_gpus):
        pytest.skip(
            "no GPU reports its violation status (amdsmi_get_violation_status: ROCm 6.3 or later, "
            "MI300 Series or later): not judged"
        )
