"""Is the hardware healthy: ECC, retired memory, throttling, power, PCIe link, MIG, processes."""

import os

import pytest

from rigcheck.facts.nvidia.clock_limits import idle_reason_advice
from rigcheck.limits import nvidia_counters
from rigcheck.require import (
    device_fact,
    device_value,
    expected,
    gpu_label,
    shown,
    version_tuple,
)

pytestmark = pytest.mark.facts


@pytest.fixture
def nvidia_devices(spec, devices, request):
    """The NVIDIA GPUs, whose health facts NVML gives; AMD GPUs are judged through amdsmi by
    test_amd_health.py."""
    nvidia_counters(spec, "health facts (ECC, RAS, power, link)", request.node.originalname)
    return devices


def test_ecc_enabled(spec, nvidia_devices):
    if not expected(spec, "ecc"):
        pytest.skip(f"{spec.name} is expected to run with ECC off")
    off = [
        f"{gpu_label(d)}: current {on}, pending {device_value(d, 'ecc.pending', required=True)}"
        for d, on in device_fact(nvidia_devices, "ecc.current", required=True)
        if on is False
    ]
    assert not off, (
        f"ECC is off: {'; '.join(off)}. Enable it with `nvidia-smi -e 1` and reboot "
        "(pending shows the state after the next reboot)."
    )


def test_no_uncorrected_ecc_errors(spec, nvidia_devices):
    """NVML counts errors only with ECC on; GPUs with it off are test_ecc_enabled's failure."""
    expected(spec, "ecc")
    ecc_on = [d for d in nvidia_devices if not _ecc_known_off(d)]
    bad = [  # the lifetime count only adds context: an unreadable one must not hide the errors
        f"{gpu_label(d)}: {n} since boot, {shown(d, 'ecc_errors.aggregate_uncorrected')} lifetime"
        for d, n in device_fact(ecc_on, "ecc_errors.volatile_uncorrected", required=True)
        if n > 0
    ]
    assert not bad, (
        f"uncorrected ECC errors: {'; '.join(bad)}. The GPU needs a reset and, if they recur, "
        "an RMA: ask the provider for another machine."
    )


def _ecc_known_off(device: dict) -> bool:
    """ECC read as off; an unreadable mode leaves the counters judged (fail closed)."""
    ecc = device.get("ecc")
    return isinstance(ecc, dict) and ecc.get("current") is False


def memory_repair(spec) -> str:
    """Which memory repair the class's GPUs report: Ampere (8.0) and later remap rows, older
    GPUs retire pages (NVIDIA, "A100 GPU Memory Error Management": row remapping replaces
    dynamic page retirement from A100 on). NVML answers Not Supported for the other one."""
    arch = spec.expected_value("compute_capability") or "0.0"
    return "remapped_rows" if version_tuple(arch) >= (8, 0) else "retired_pages"


def test_no_pending_memory_repair(spec, nvidia_devices):
    """Pre-Ampere retires pages, Ampere and later remap rows; either pending needs a reset.

    The one the class's architecture uses must be readable: Not Supported there is a driver
    or a vGPU profile hiding the GPU's memory health, and fails closed."""
    expected(spec, "ecc")
    needs = memory_repair(spec)
    bad = []
    for d in nvidia_devices:
        pending = device_value(d, "retired_pages.pending", required=needs == "retired_pages")
        if pending is True:
            bad.append(f"{gpu_label(d)}: page retirement pending")
        required = needs == "remapped_rows"
        pending = device_value(d, "remapped_rows.pending", required=required)
        failed = device_value(d, "remapped_rows.failure", required=required)
        rows = device_value(d, "remapped_rows.uncorrectable", required=required)
        if pending is True or failed is True:
            state = "row remap FAILED" if failed is True else "row remap pending"
            bad.append(f"{gpu_label(d)}: {state} ({rows} uncorrectable rows)")
    assert not bad, (
        f"memory repair outstanding: {'; '.join(bad)}. Pending: reset the GPU "
        "(nvidia-smi -r) or reboot. Failed: the GPU must be replaced."
    )


# What each NVML GPU recovery action asks (nvmlGpuRecoveryAction_t, NVIDIA's Xid catalogue).
RECOVERY_ADVICE = {
    "gpu_reset": "reset the GPU (nvidia-smi -r -i N) once no process uses it",
    "node_reboot": "reboot the node",
    "drain_p2p": "stop peer-to-peer (NVLink) traffic to the GPU, then reset it",
    "drain_and_reset": "drain the node's jobs, then reset the GPU",
    "recover_imex_domain": "recover the IMEX domain (restart nvidia-imex on its nodes)",
    "bus_reset": "reset the GPU's PCIe bus (a node reboot does it)",
    "system_reboot": "reboot the system",
}


def test_no_gpu_recovery_action_pending(nvidia_devices):
    """The driver's own word that a GPU must be reset, drained or the node rebooted (NVML's
    GPU recovery action, R565 and later). The kernel log says it once, as Xid 154; this reads
    it whenever the check runs, so a rotated log or a short --xid-window cannot hide it."""
    recorded = [d for d in nvidia_devices if "recovery_action" in d]
    if not recorded:
        pytest.skip("no GPU recovery action in this snapshot (recorded before rigcheck read it)")
    actions = [(d, a) for d, a in device_fact(recorded, "recovery_action") if a is not None]
    if not actions:
        pytest.skip("the driver reports no GPU recovery action (NVML answers it from R565)")
    bad = [f"{gpu_label(d)}: {a}" for d, a in actions if a != "none"]
    advice = " ".join(sorted({f"{a}: {RECOVERY_ADVICE[a]}." for d, a in actions if a != "none"}))
    assert not bad, (
        f"the driver asks for recovery before these GPUs are used: {'; '.join(bad)}. {advice} "
        "If it comes back after that, the GPU is faulty: ask the provider."
    )


def test_no_throttle_at_idle(spec, nvidia_devices):
    allowed = set(spec.expect("idle_throttle_reasons_allowed"))
    bad = [
        f"{gpu_label(d)}: {', '.join(sorted(unexplained(d, reasons, allowed)))}"
        for d, reasons in device_fact(nvidia_devices, "throttle_reasons", required=True)
        if unexplained(d, reasons, allowed)
    ]
    seen = sorted({r for d, reasons in device_fact(nvidia_devices, "throttle_reasons")
                   for r in unexplained(d, reasons or [], allowed)})  # fmt: skip
    advice = " ".join(f"{r}: {idle_reason_advice(r)}." for r in seen)
    assert not bad, f"clocks held down at idle: {'; '.join(bad)}. {advice}"


def unexplained(device: dict, reasons: list[str], allowed: set[str]) -> set[str]:
    """The reasons a GPU is held down for that its class does not allow at idle. SW power cap
    with the enforced limit at the board's default is the board's own budget, not a lowered
    limit (idle GeForce boards at P8 report it: the RTX 3090 of telegraf's 3090-v13.xml, 35 W
    of 350 W): the cap a person set is test_power_limit_not_capped's to judge."""
    extra = set(reasons) - allowed
    limit = device_value(device, "power.limit_w")
    if (
        "sw_power_cap" in extra
        and limit is not None
        and limit == device_value(device, "power.default_limit_w")
    ):
        extra.discard("sw_power_cap")
    return extra


def test_power_limit_not_capped(spec, nvidia_devices):
    tdp = expected(spec, "tdp")
    margin = spec.data["expect"].get("power_limit_margin", 0.05)
    floor = tdp * (1 - margin)
    capped = [
        f"{gpu_label(d)}: {watts:.0f} W (default {shown(d, 'power.default_limit_w')} W)"
        for d, watts in device_fact(nvidia_devices, "power.limit_w", required=True)
        if watts < floor
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
        f"{gpu_label(d)}: Gen{gen} max in this slot (device Gen{shown(d, 'pcie.gen_device_max')})"
        for d, gen in device_fact(nvidia_devices, "pcie.gen_max", required=True)
        if gen < want
    ]
    assert not slow, (
        f"PCIe link below Gen{want}: {'; '.join(slow)}. A slot, riser or BIOS setting "
        "limits the link: host-device copies run at a fraction of their rate."
    )


def test_pcie_width(spec, nvidia_devices):
    """The widest link this board and slot can train (NVML's max link width), not the current
    width: NVIDIA documents that the current link may narrow while the GPU is not in use
    (nvmlDeviceGetCurrPcieLinkWidth; an idle L4 reads x8 of x16). A link that stays narrow
    under load is the burn-in's to judge, where the width is sampled while data flows."""
    want = expected_pcie(spec)["width"]
    narrow = [
        f"{gpu_label(d)}: max x{width} (now x{shown(d, 'pcie.width_current')})"
        for d, width in device_fact(nvidia_devices, "pcie.width_max", required=True)
        if width < want
    ]
    assert not narrow, (
        f"PCIe link narrower than x{want} at its maximum (the widest this board and slot can "
        f"train, not the idle reading): {'; '.join(narrow)}. A half-width slot or riser halves "
        "host-device bandwidth: check the slot, riser and BIOS lane settings."
    )


def test_persistence_mode(spec, nvidia_devices):
    """Off fails, on every class that expects it: NVML reports persistence mode Enabled both
    for the legacy flag and while nvidia-persistenced runs (it enables it on every GPU unless
    started with --no-persistence-mode: NVIDIA/nvidia-persistenced nvidia-persistenced.1.m4),
    so Disabled means neither keeps the GPU initialised. NVIDIA's Driver Persistence guide
    (docs.nvidia.com/deploy/driver-persistence): without it each GPU is torn down when its last
    client exits and every start pays its initialisation again (1-3 s per GPU for ECC
    scrubbing) with non-persistent state reset. NVIDIA's own 8x B200 capture (driver 595.91.07)
    reads Disabled on all 8 GPUs: a real state of that node, so it fails there too."""
    if not expected(spec, "persistence_mode"):
        pytest.skip(f"{spec.name} does not expect persistence mode")
    off = [
        gpu_label(d)
        for d, on in device_fact(nvidia_devices, "persistence_mode", required=True)
        if on is False
    ]
    assert not off, (
        f"persistence mode off on {', '.join(off)}: with no client the driver tears the GPU "
        "down, so every CUDA start initialises it again (1-3 s per GPU) and settings such as "
        "application clocks revert. Start NVIDIA's persistence daemon, which turns the mode on "
        "for every GPU: `sudo systemctl enable --now nvidia-persistenced` (the legacy "
        "`nvidia-smi -pm 1` is near end-of-life: NVIDIA's Driver Persistence guide)."
    )


def test_mig_state(spec, nvidia_devices):
    """A class with MIG must report its mode: Not Supported there hides how the GPU is split."""
    want = spec.expected_value("mig")
    if want is None:
        pytest.skip(f"{spec.title} has no MIG")
    wrong = [
        f"{gpu_label(d)}: MIG {'on' if on else 'off'}"
        for d, on in device_fact(nvidia_devices, "mig.current", required=True)
        if on is not want
    ]
    assert not wrong, (
        f"MIG expected {'on' if want else 'off'}: {'; '.join(wrong)}. With MIG on, a process "
        "sees one slice, not the whole GPU: `nvidia-smi -mig 0` and reset to disable it."
    )


def test_no_other_processes(facts, spec, nvidia_devices):
    mine = {os.getpid()} if facts.origin.get("kind") == "live" else set()
    busy = []
    for d, procs in device_fact(nvidia_devices, "processes", required=True):
        pids = [device_value(d, f"processes.{i}.pid") for i in range(len(procs))]
        others = [str(pid) for pid in pids if pid not in mine]
        if others:
            busy.append(f"{gpu_label(d)}: pids {', '.join(others)}")
    assert not busy, (
        f"other processes hold the GPU: {'; '.join(busy)}. They take memory and time: "
        "measurements and memory checks are wrong until they stop."
    )


def test_nvlink_up(spec, nvidia_devices, expected_gpus):
    """A class with NVLink must report its links: Not Supported or none at all fails closed."""
    link = spec.expect("gpu_link")
    if link["type"] != "nvlink":
        pytest.skip(f"{spec.name} has no NVLink ({link['type']})")
    if expected_gpus < 2:
        pytest.skip("one GPU: no peer to link to (run with --gpus N on a multi-GPU node)")
    want = link["links_per_device"]
    down = []
    for d, links in device_fact(nvidia_devices, "nvlink", required=True):
        active = [device_value(d, f"nvlink.{i}.active") for i in range(len(links))]
        if sum(1 for up in active if up is True) < want:
            down.append(
                f"{gpu_label(d)}: {sum(1 for up in active if up is True)}/{want} links active"
            )
    assert not down, (
        f"NVLink down: {'; '.join(down)}. Collectives fall back to PCIe at a fraction of the "
        "bandwidth: `nvidia-smi nvlink -s` shows which; the node needs service."
    )
