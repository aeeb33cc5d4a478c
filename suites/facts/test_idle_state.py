"""Idle clocks and temperature against the GPU's own limits; firmware the same on every GPU."""

import pytest

from rigcheck.limits import count, health_limit, nvidia_only, record
from rigcheck.require import device_values, gpu_label

pytestmark = pytest.mark.facts

CLOCK_KEYS = ("sm_mhz", "mem_mhz", "default_sm_mhz", "default_mem_mhz")


@pytest.fixture
def gpus(spec, devices):
    nvidia_only(spec, "clocks, thermal thresholds and firmware")
    return devices


def test_applications_clocks_at_default(gpus):
    judged, low = 0, []
    for d, clocks in device_values(gpus, "applications_clocks"):
        if clocks is None:
            continue  # GeForce boards have no applications clocks (NVML: NotSupported)
        clocks = record(clocks, f"{gpu_label(d)} applications_clocks", CLOCK_KEYS)
        n = {k: count(clocks[k], f"{gpu_label(d)} {k}") for k in CLOCK_KEYS}
        judged += 1
        for kind in ("sm", "mem"):
            if n[f"{kind}_mhz"] < n[f"default_{kind}_mhz"]:
                low.append(
                    f"{gpu_label(d)}: {kind} {n[f'{kind}_mhz']} MHz "
                    f"(default {n[f'default_{kind}_mhz']} MHz)"
                )
    if not judged:
        pytest.skip("no GPU reports applications clocks (GeForce boards have none)")
    assert not low, (
        f"applications clocks set below the board's default: {'; '.join(low)}. Someone ran "
        "`nvidia-smi -ac`; every kernel runs slower. Restore them with `nvidia-smi -rac` "
        "(and check `nvidia-smi -q -d CLOCK` for locked clocks: `nvidia-smi -rgc`)."
    )


def test_idle_temperature_below_slowdown(spec, gpus):
    margin = health_limit(spec, "idle_temperature_margin_c")
    hot = []
    thresholds = dict(
        (d["index"], t) for d, t in device_values(gpus, "temperature_thresholds", required=True)
    )
    for d, temp in device_values(gpus, "temperature_c", required=True):
        t = record(thresholds[d["index"]], f"{gpu_label(d)} thresholds", ("slowdown_c",))
        slowdown = count(t["slowdown_c"], f"{gpu_label(d)} slowdown threshold")
        if count(temp, f"{gpu_label(d)} temperature") > slowdown - margin:
            hot.append(f"{gpu_label(d)}: {temp} C (slows down at {slowdown} C, shuts down at "
                       f"{t.get('shutdown_c', '?')} C)")  # fmt: skip
    assert not hot, (
        f"GPUs hot at idle, within {margin:.0f} C of their slowdown threshold: {'; '.join(hot)}. "
        "Under load they will throttle or shut down: check fans, airflow and the inlet "
        "temperature, or ask the provider."
    )


def test_firmware_identical_across_gpus(gpus):
    versions = {}
    for d, fw in device_values(gpus, "firmware", required=True):
        fw = record(fw, f"{gpu_label(d)} firmware", ("vbios", "inforom_image"))
        key = (fw["vbios"], fw["inforom_image"])
        if not all(isinstance(v, str) and v for v in key):
            pytest.fail(f"cannot check: {gpu_label(d)} firmware is {fw!r}", pytrace=False)
        versions.setdefault(key, []).append(gpu_label(d))
    assert len(versions) <= 1, (
        "GPUs of this node run different firmware: "
        + "; ".join(f"VBIOS {v}, InfoROM {i} on {', '.join(g)}" for (v, i), g in versions.items())
        + ". Mixed firmware means a GPU was swapped without an update; some fixes (ECC, NVLink "
        "training) are in firmware. Ask the provider to flash them all to the same version."
    )
