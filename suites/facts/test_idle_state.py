"""Idle clocks and temperature against the GPU's own limits; firmware the same on every GPU."""

import pytest

from rigcheck.limits import health_limit, nvidia_counters
from rigcheck.require import device_value, gpu_label, shown

pytestmark = pytest.mark.facts


@pytest.fixture
def gpus(spec, devices, request):
    nvidia_counters(spec, "clocks, thermal thresholds and firmware", request.node.originalname)
    return devices


def test_applications_clocks_at_default(gpus):
    judged = [d for d in gpus if device_value(d, "applications_clocks") is not None]
    if not judged:
        pytest.skip("no GPU reports applications clocks (GeForce boards have none)")
    low = []
    for d in judged:
        for kind in ("sm", "mem"):
            now = device_value(d, f"applications_clocks.{kind}_mhz")
            default = device_value(d, f"applications_clocks.default_{kind}_mhz")
            if now < default:
                low.append(f"{gpu_label(d)}: {kind} {now} MHz (default {default} MHz)")
    assert not low, (
        f"applications clocks set below the board's default: {'; '.join(low)}. Someone ran "
        "`nvidia-smi -ac`; every kernel runs slower. Restore them with `nvidia-smi -rac` "
        "(and check `nvidia-smi -q -d CLOCK` for locked clocks: `nvidia-smi -rgc`)."
    )


def test_boost_clock_ceiling_at_board_max(gpus):
    """NVML's customer boost maximum below the board's maximum SM clock: clocks capped."""
    judged = [d for d in gpus if device_value(d, "clock_limits") is not None]
    if not judged:
        pytest.skip("no GPU reports a customer boost clock (GeForce boards have none)")
    low = []
    for d in judged:
        ceiling = device_value(d, "clock_limits.sm_customer_boost_max_mhz")
        top = device_value(d, "clocks.sm_max_mhz", required=True)
        if ceiling is not None and ceiling < top:
            low.append(f"{gpu_label(d)}: boosts to {ceiling} MHz at most, its maximum is {top} MHz")
    assert not low, (
        f"SM clocks capped below the board's maximum: {'; '.join(low)}. Every kernel runs "
        f"slower by that ratio. The customer boost clock is set in the board's configuration "
        "by the OEM or provider: ask them to restore the default (`nvidia-smi -q -d CLOCK` "
        "shows 'Max Customer Boost Clocks' beside 'Max Clocks'). Clocks locked with "
        "`nvidia-smi -lgc` are undone with `nvidia-smi -rgc`."
    )


def test_idle_temperature_below_slowdown(spec, gpus):
    margin = health_limit(spec, "idle_temperature_margin_c")
    hot = []
    for d in gpus:
        device_value(d, "temperature_thresholds", required=True)
        slowdown = device_value(d, "temperature_thresholds.slowdown_c")
        temp = device_value(d, "temperature_c", required=True)
        if temp > slowdown - margin:
            shutdown = shown(d, "temperature_thresholds.shutdown_c")
            hot.append(f"{gpu_label(d)}: {temp} C (slows down at {slowdown} C, shuts down at "
                       f"{shutdown} C)")  # fmt: skip
    assert not hot, (
        f"GPUs hot at idle, within {margin:.0f} C of their slowdown threshold: {'; '.join(hot)}. "
        "Under load they will throttle or shut down: check fans, airflow and the inlet "
        "temperature, or ask the provider."
    )


def test_firmware_identical_across_gpus(gpus):
    versions = {}
    for d in gpus:
        device_value(d, "firmware", required=True)
        key = (device_value(d, "firmware.vbios"), device_value(d, "firmware.inforom_image"))
        versions.setdefault(key, []).append(gpu_label(d))
    assert len(versions) <= 1, (
        "GPUs of this node run different firmware: "
        + "; ".join(f"VBIOS {v}, InfoROM {i} on {', '.join(g)}" for (v, i), g in versions.items())
        + ". Mixed firmware means a GPU was swapped without an update; some fixes (ECC, NVLink "
        "training) are in firmware. Ask the provider to flash them all to the same version."
    )
