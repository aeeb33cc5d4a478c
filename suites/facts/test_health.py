"""Is the hardware healthy: ECC, retired memory, throttling, power, PCIe link, MIG, processes."""

import os

import pytest

from rigcheck.require import device_values, expected, gpu_label

pytestmark = pytest.mark.facts


@pytest.fixture
def nvidia_devices(spec, devices):
    """Health facts come from NVML; AMD devices need amdsmi, which rigcheck does not read yet."""
    if spec.vendor == "amd":
        pytest.xfail("AMD health facts (ECC, RAS, power, link) are not probed yet: needs amdsmi")
    if spec.vendor != "nvidia":
        pytest.skip(f"{spec.title} reports no NVML health facts")
    return devices


def test_ecc_enabled(spec, nvidia_devices):
    if not expected(spec, "ecc"):
        pytest.skip(f"{spec.name} is expected to run with ECC off")
    off = [
        f"{gpu_label(d)}: current {e['current']}, pending {e['pending']}"
        for d, e in device_values(nvidia_devices, "ecc", required=True)
        if not e["current"]
    ]
    assert not off, (
        f"ECC is off: {'; '.join(off)}. Enable it with `nvidia-smi -e 1` and reboot "
        "(pending shows the state after the next reboot)."
    )


def test_no_uncorrected_ecc_errors(spec, nvidia_devices):
    """NVML counts errors only with ECC on; GPUs with it off are test_ecc_enabled's failure."""
    expected(spec, "ecc")
    ecc_on = [d for d in nvidia_devices if (d.get("ecc") or {}).get("current") is not False]
    bad = [
        f"{gpu_label(d)}: {e['volatile_uncorrected']} since boot, "
        f"{e['aggregate_uncorrected']} lifetime"
        for d, e in device_values(ecc_on, "ecc_errors", required=True)
        if e["volatile_uncorrected"] > 0
    ]
    assert not bad, (
        f"uncorrected ECC errors: {'; '.join(bad)}. The GPU needs a reset and, if they recur, "
        "an RMA: ask the provider for another machine."
    )


def test_no_pending_memory_repair(spec, nvidia_devices):
    """Pre-Ampere retires pages, Ampere and later remap rows; either pending needs a reset."""
    expected(spec, "ecc")
    bad = []
    for d, pages in device_values(nvidia_devices, "retired_pages"):
        if pages and pages["pending"]:
            bad.append(f"{gpu_label(d)}: page retirement pending")
    for d, rows in device_values(nvidia_devices, "remapped_rows"):
        if rows and (rows["pending"] or rows["failure"]):
            state = "row remap FAILED" if rows["failure"] else "row remap pending"
            bad.append(f"{gpu_label(d)}: {state} ({rows['uncorrectable']} uncorrectable rows)")
    assert not bad, (
        f"memory repair outstanding: {'; '.join(bad)}. Pending: reset the GPU "
        "(nvidia-smi -r) or reboot. Failed: the GPU must be replaced."
    )


def test_no_throttle_at_idle(spec, nvidia_devices):
    allowed = set(spec.expect("idle_throttle_reasons_allowed"))
    bad = [
        f"{gpu_label(d)}: {', '.join(sorted(set(reasons) - allowed))}"
        for d, reasons in device_values(nvidia_devices, "throttle_reasons", required=True)
        if set(reasons) - allowed
    ]
    assert not bad, (
        f"clocks held down at idle: {'; '.join(bad)}. Thermal reasons: check cooling and "
        "fans; power reasons: check the power limit; hw_slowdown: a power or thermal fault."
    )


def test_power_limit_not_capped(spec, nvidia_devices):
    tdp = expected(spec, "tdp")
    margin = spec.data["expect"].get("power_limit_margin", 0.05)
    floor = tdp * (1 - margin)
    capped = [
        f"{gpu_label(d)}: {p['limit_w']:.0f} W (default {p.get('default_limit_w') or '?'} W)"
        for d, p in device_values(nvidia_devices, "power", required=True)
        if p["limit_w"] < floor
    ]
    assert not capped, (
        f"power limit below {floor:.0f} W ({spec.name} TDP {tdp} W less {margin:.0%}): "
        f"{'; '.join(capped)}. Throughput drops with it; `nvidia-smi -q -d POWER` shows who "
        "set it. Ask the provider, or restore the default limit."
    )


def expected_pcie(spec) -> dict:
    """The class's PCIe link: an object with generation and width, not a {value, source} pair."""
    link = spec.expect("pcie")
    if link is None:
        pytest.skip(f"{spec.name} has no PCIe link to check")
    return link


def test_pcie_generation(spec, nvidia_devices):
    """The maximum this device can reach in this slot: idle GPUs drop the current link gen."""
    want = expected_pcie(spec)["generation"]
    slow = [
        f"{gpu_label(d)}: Gen{p['gen_max']} max in this slot "
        f"(device Gen{p.get('gen_device_max') or '?'})"
        for d, p in device_values(nvidia_devices, "pcie", required=True)
        if p["gen_max"] < want
    ]
    assert not slow, (
        f"PCIe link below Gen{want}: {'; '.join(slow)}. A slot, riser or BIOS setting "
        "limits the link: host-device copies run at a fraction of their rate."
    )


def test_pcie_width(spec, nvidia_devices):
    want = expected_pcie(spec)["width"]
    narrow = [
        f"{gpu_label(d)}: x{p['width_current']} (max x{p['width_max']})"
        for d, p in device_values(nvidia_devices, "pcie", required=True)
        if p["width_current"] < want
    ]
    assert not narrow, (
        f"PCIe link narrower than x{want}: {'; '.join(narrow)}. A half-width link halves "
        "host-device bandwidth: reseat the card or check the slot and riser."
    )


def test_persistence_mode(spec, nvidia_devices):
    if not expected(spec, "persistence_mode"):
        pytest.skip(f"{spec.name} does not expect persistence mode")
    off = [
        gpu_label(d)
        for d, on in device_values(nvidia_devices, "persistence_mode", required=True)
        if not on
    ]
    assert not off, (
        f"persistence mode off on {', '.join(off)}: every CUDA start re-initialises the "
        "driver (seconds of latency, lost clocks). Run nvidia-persistenced."
    )


def test_mig_state(spec, nvidia_devices):
    want = spec.expected_value("mig")
    if want is None:
        pytest.skip(f"{spec.title} has no MIG")
    wrong = [
        f"{gpu_label(d)}: MIG {'on' if m and m['current'] else 'off'}"
        for d, m in device_values(nvidia_devices, "mig")
        if bool(m and m["current"]) != want
    ]
    assert not wrong, (
        f"MIG expected {'on' if want else 'off'}: {'; '.join(wrong)}. With MIG on, a process "
        "sees one slice, not the whole GPU: `nvidia-smi -mig 0` and reset to disable it."
    )


def test_no_other_processes(facts, spec, nvidia_devices):
    mine = {os.getpid()} if facts.origin.get("kind") == "live" else set()
    busy = [
        f"{gpu_label(d)}: pids {', '.join(str(p['pid']) for p in procs if p['pid'] not in mine)}"
        for d, procs in device_values(nvidia_devices, "processes", required=True)
        if any(p["pid"] not in mine for p in procs)
    ]
    assert not busy, (
        f"other processes hold the GPU: {'; '.join(busy)}. They take memory and time: "
        "measurements and memory checks are wrong until they stop."
    )


def test_nvlink_up(spec, nvidia_devices, expected_gpus):
    link = spec.expect("gpu_link")
    if link["type"] != "nvlink":
        pytest.skip(f"{spec.name} has no NVLink ({link['type']})")
    if expected_gpus < 2:
        pytest.skip("one GPU: no peer to link to (run with --gpus N on a multi-GPU node)")
    want = link["links_per_device"]
    down = [
        f"{gpu_label(d)}: {sum(x['active'] for x in links)}/{want} links active"
        for d, links in device_values(nvidia_devices, "nvlink")
        if sum(x["active"] for x in links) < want
    ]
    assert not down, (
        f"NVLink down: {'; '.join(down)}. Collectives fall back to PCIe at a fraction of the "
        "bandwidth: `nvidia-smi nvlink -s` shows which; the node needs service."
    )
