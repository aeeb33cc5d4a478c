"""The fact checks decided at their limits: each check of suites/facts called as a function on a
class's spec and synthetic devices, just below / at / just above every health limit, each
allowed value member by member, asserting the decision and the message.

Called directly, not through a pytest session: a decision costs microseconds, so every NVIDIA
class is swept (limits come from expected/*.json: a new class is covered with no new code) and
a mutation run can afford them once per mutant. tests/boundaries/test_fact_limits.py runs the
same checks through the real plugin on replayed snapshots.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import os

import pytest
from check_calls import call

from rigcheck.facts import Facts, typed
from rigcheck.facts.kernel_log import amdgpu as amdgpu_log
from rigcheck.limits import health_limit
from rigcheck.replay_rate import replays_allowed_per_minute
from rigcheck.spec import Spec, known_classes, load_spec
from rigcheck.testing.synthetic import synthetic_snapshot

counters = importlib.import_module("suites.facts.test_counters")
health = importlib.import_module("suites.facts.test_health")
hidden = importlib.import_module("suites.facts.test_hidden_state")
host_limits = importlib.import_module("suites.facts.test_host_limits")
idle = importlib.import_module("suites.facts.test_idle_state")

NVIDIA = [n for n in known_classes() if load_spec(n).vendor == "nvidia"]
NVLINK = [n for n in NVIDIA if load_spec(n).expect("gpu_link")["type"] == "nvlink"]
ECC_CLASSES = [n for n in NVIDIA if load_spec(n).expected_value("ecc") is not None]
GPU_CLASSES = [n for n in known_classes() if load_spec(n).backend in ("cuda", "rocm")]
MIB = 2**20


def decide(check, *args) -> tuple[str, str]:
    """(outcome, message) of one check call, as pytest would report it."""
    return call(check, *args)[:2]


def node(name: str, gpus: int = 1) -> tuple[Spec, list[dict], Facts]:
    spec = load_spec(name)
    data = synthetic_snapshot(spec, gpus=gpus)
    return spec, data["devices"], Facts(data)


def limit(spec: Spec, key: str):
    return spec.data["health_limits"][key]["value"]


def label(d: dict) -> str:
    return f"GPU {d['index']} ({d['pci']['bus_id']})"


def without(spec: Spec, *keys: str) -> Spec:
    """The class with expectations removed (what an older or a partial spec file has)."""
    data = copy.deepcopy(spec.data)
    for key in keys:
        section, _, name = key.rpartition(".")
        (data[section] if section else data).pop(name, None)
    return Spec(data, spec.path)


def ecc_off(spec: Spec) -> Spec:
    data = copy.deepcopy(spec.data)
    data["expect"]["ecc"]["value"] = False
    return Spec(data, spec.path)


# ---- counters: PCIe replays and AER ----


@pytest.mark.parametrize("name", NVIDIA)
def test_pcie_replays_below_at_and_above_the_limit(name):
    """A minute after boot, so a count above the allowance is also above every link's rate."""
    spec, devices, facts = node(name, gpus=3)
    facts.data["kernel_log"]["uptime_s"] = 60.0
    top = limit(spec, "pcie_replays_max")
    for d, n in zip(devices, (top - 1, top, top + 1), strict=True):
        d["pcie_replays"] = n
    outcome, message = decide(counters.test_pcie_replays_within_limit, spec, devices, facts)
    link = devices[2]["pcie"]
    assert outcome == "failed"
    assert message == (
        f"PCIe replays above {top:.0f} and faster than the PCIe bit-error rate (1e-12) allows "
        f"since boot: {label(devices[2])}: {top + 1} replays in 0.02 h = {top + 1:.1f}/min, "
        f"above the {replays_allowed_per_minute(link['gen_max'], link['width_current'])}/min a "
        f"Gen{link['gen_max']} x{link['width_current']} link allows. Each replay is a packet "
        "the link had to resend: a marginal riser, cable or slot at this link speed. Reseat the "
        "card and its riser; if the count keeps rising, ask the provider to service the slot "
        "(or RMA the GPU)."
    ), message
    devices[2]["pcie_replays"] = top
    assert decide(counters.test_pcie_replays_within_limit, spec, devices, facts) == ("passed", "")


@pytest.mark.parametrize("name", NVIDIA)
def test_pcie_aer_each_counter_at_and_above_its_limit(name):
    spec, devices, _ = node(name, gpus=5)
    corr, uncorr = (
        limit(spec, "pcie_aer_correctable_max"),
        limit(spec, "pcie_aer_uncorrectable_max"),
    )
    counts = [  # (correctable, nonfatal, fatal)
        (corr, uncorr, 0),  # at both limits
        (corr + 1, 0, 0),
        (0, uncorr + 1, 0),
        (0, 0, uncorr + 1),
        (0, uncorr, 1),  # the sum is judged: one over
    ]
    for d, (c, nf, f) in zip(devices, counts, strict=True):
        d["pcie_aer"] = {"correctable": c, "nonfatal": nf, "fatal": f}
    outcome, message = decide(counters.test_pcie_aer_within_limits, spec, devices)
    assert outcome == "failed"
    assert message == (
        f"PCIe AER errors since boot: {label(devices[1])}: {corr + 1} correctable (> {corr:.0f}); "
        f"{label(devices[2])}: {uncorr + 1} non-fatal, 0 fatal; "
        f"{label(devices[3])}: 0 non-fatal, {uncorr + 1} fatal; "
        f"{label(devices[4])}: {uncorr} non-fatal, 1 fatal. Uncorrectable errors lose or corrupt "
        "transactions; many correctable ones mean a marginal link. `lspci -vvv -s <bus>` shows "
        "the error bits; reseat the card and riser, and if they recur ask the provider to service "
        "the slot or replace the GPU."
    ), message
    for d in devices[1:]:
        d["pcie_aer"] = {"correctable": corr, "nonfatal": uncorr, "fatal": 0}
    assert decide(counters.test_pcie_aer_within_limits, spec, devices) == ("passed", "")


def test_pcie_aer_skips_only_when_no_gpu_has_statistics():
    spec, devices, _ = node("h100", gpus=2)
    for d in devices:
        d["pcie_aer"] = None
    outcome, message = decide(counters.test_pcie_aer_within_limits, spec, devices)
    assert (outcome, message) == (
        "skipped",
        "no AER statistics in sysfs (kernel before 4.19, AER off, or a VM)",
    )
    devices[1]["pcie_aer"] = {"correctable": 0, "nonfatal": 0, "fatal": 1}
    outcome, message = decide(counters.test_pcie_aer_within_limits, spec, devices)
    assert outcome == "failed" and f"{label(devices[1])}: 0 non-fatal, 1 fatal" in message


# ---- counters: NVLink errors and the NVSwitch fabric ----


def _links(d: dict, **counts) -> None:
    d["nvlink_errors"] = [
        {"link": 0, "crc_flit": 0, "crc_data": 0, "replay": 0, "recovery": 0},
        {"link": 7, "crc_flit": 0, "crc_data": 0, "replay": 0, "recovery": 0, **counts},
    ]


@pytest.mark.parametrize("name", NVLINK)
def test_nvlink_counters_at_and_above_each_limit(name):
    spec, devices, _ = node(name, gpus=6)
    crc, replay, recovery = (
        limit(spec, k)
        for k in ("nvlink_crc_errors_max", "nvlink_replay_errors_max", "nvlink_recovery_errors_max")
    )
    _links(devices[0], crc_flit=crc, replay=replay, recovery=recovery)  # at every limit
    _links(devices[1], crc_flit=crc, crc_data=1)  # flit + data: one over
    _links(devices[2], crc_flit=None, crc_data=crc + 1)  # an uncounted flit CRC adds nothing
    _links(devices[3], replay=replay + 1)
    _links(devices[4], recovery=recovery + 1, replay=None)
    _links(devices[5], crc_flit=None, crc_data=None, replay=None, recovery=None)
    check = counters.test_nvlink_error_counters
    outcome, message = decide(check, spec, devices, 6)
    assert outcome == "failed"
    assert message == (
        f"NVLink errors above the limits (CRC {crc:.0f}, replay {replay:.0f}, recovery "
        f"{recovery:.0f}): {label(devices[1])} link 7: {crc + 1} CRC, 0 replay; "
        f"{label(devices[2])} link 7: {crc + 1} CRC, 0 replay; "
        f"{label(devices[3])} link 7: 0 CRC, {replay + 1} replay; "
        f"{label(devices[4])} link 7: {recovery + 1} recoveries. CRC errors and replays are flits "
        "resent on a marginal link, recoveries are the link retraining: collectives slow down or "
        "hang. `nvidia-smi nvlink -e` shows them; reset the GPUs, and if they recur ask the "
        "provider to service the baseboard or NVSwitch tray."
    ), message
    for d in devices[1:5]:
        _links(d, crc_flit=crc, replay=replay, recovery=recovery)
    assert decide(check, spec, devices, 6) == ("passed", "")


def test_nvlink_checks_skip_without_nvlink_or_a_peer():
    spec, devices, _ = node("h100")
    assert decide(counters.test_nvlink_error_counters, spec, devices, 1) == (
        "skipped",
        "one GPU: its NVLinks carry no traffic (run with --gpus N on a multi-GPU node)",
    )
    spec, devices, _ = node("l40s", gpus=2)
    assert decide(counters.test_nvswitch_fabric_registered, spec, devices, 2) == (
        "skipped",
        "l40s has no NVLink (pcie_only)",
    )


@pytest.mark.parametrize(
    ("state", "status", "outcome"),
    [
        ("completed", 0, "passed"),
        ("completed", 1, "failed"),
        ("in_progress", 0, "failed"),
        ("not_started", 0, "failed"),
    ],
)
def test_nvswitch_fabric_states_member_by_member(state, status, outcome):
    spec, devices, _ = node("h100", gpus=2)
    devices[1]["fabric"] = {"state": state, "status": status}
    got, message = decide(counters.test_nvswitch_fabric_registered, spec, devices, 2)
    assert got == outcome, message
    if outcome == "failed":
        assert message == (
            f"GPUs not registered with the NVSwitch fabric: {label(devices[1])}: state {state}, "
            f"status {status}. Until the fabric manager finishes, CUDA cannot use NVLink between "
            "these GPUs. Check `systemctl status nvidia-fabricmanager` (its version must match "
            "the driver's) and restart it; if it fails, ask the provider."
        ), message


def test_nvswitch_fabric_not_supported_everywhere_skips():
    spec, devices, _ = node("h100", gpus=2)
    devices[0]["fabric"] = None
    devices[1]["fabric"] = {"state": "not_supported", "status": 0}
    assert decide(counters.test_nvswitch_fabric_registered, spec, devices, 2) == (
        "skipped",
        "no GPU reports an NVSwitch fabric state (before Hopper, no NVSwitch, or a driver before "
        "R530, which has no nvmlDeviceGetGpuFabricInfo)",
    )
    devices[0]["fabric"] = {"state": "in_progress", "status": 0}  # one judged, one not
    outcome, message = decide(counters.test_nvswitch_fabric_registered, spec, devices, 2)
    assert outcome == "failed" and f"{label(devices[0])}: state in_progress" in message
    assert label(devices[1]) not in message


# ---- counters: ECC by location, remapped rows, retired pages ----

ECC = {  # counter -> (health limit, how the message names it)
    "dram_corrected": ("ecc_dram_corrected_max", "DRAM corrected"),
    "sram_corrected": ("ecc_sram_corrected_max", "SRAM corrected"),
    "sram_uncorrected": ("ecc_sram_uncorrected_max", "SRAM uncorrected"),
}


@pytest.mark.parametrize("name", ECC_CLASSES)
@pytest.mark.parametrize("counter", sorted(ECC))
@pytest.mark.parametrize("span", ["volatile", "aggregate"])
def test_ecc_by_location_at_and_above_its_ceiling(name, counter, span):
    spec, devices, _ = node(name, gpus=2)
    key, what = ECC[counter]
    ceiling = limit(spec, key)
    for d in devices:
        d["ecc_by_location"] = {k: 0 for k in d["ecc_by_location"]} if d[
            "ecc_by_location"
        ] else {f"{w}_{k}_{s}": 0 for w in ("dram", "sram") for k in ("corrected", "uncorrected")
              for s in ("volatile", "aggregate")}  # fmt: skip
    devices[0]["ecc_by_location"][f"{counter}_{span}"] = ceiling
    devices[1]["ecc_by_location"][f"{counter}_{span}"] = ceiling + 1
    outcome, message = decide(counters.test_ecc_counts_within_ceilings, spec, devices)
    assert outcome == "failed"
    assert message == (
        f"ECC error counts above their ceilings: {label(devices[1])}: {ceiling + 1} {what} "
        f"(ceiling {ceiling:.0f}). Many corrected errors mean memory wearing out toward "
        "uncorrectable ones; an SRAM uncorrected error means on-chip memory failed. Drain the "
        "node and ask the provider to replace the GPU (RMA)."
    ), message
    devices[1]["ecc_by_location"] = None  # before Ampere: not split, not judged here
    assert decide(counters.test_ecc_counts_within_ceilings, spec, devices) == ("passed", "")


@pytest.mark.parametrize("name", ECC_CLASSES)
def test_remapped_rows_at_and_above_the_ceiling(name):
    spec, devices, _ = node(name, gpus=3)
    ceiling = limit(spec, "remapped_rows_uncorrectable_max")
    rows = {"correctable": 0, "failure": False, "pending": False}
    devices[0]["remapped_rows"] = None  # pre-Ampere: pages are retired instead
    devices[1]["remapped_rows"] = dict(rows, uncorrectable=ceiling)
    devices[2]["remapped_rows"] = dict(rows, uncorrectable=ceiling + 1)
    outcome, message = decide(counters.test_remapped_rows_below_ceiling, spec, devices)
    assert outcome == "failed"
    assert message == (
        f"remapped rows above {ceiling:.0f}: {label(devices[2])}: {ceiling + 1} rows remapped "
        "(uncorrectable). The spare rows are running out; the next uncorrectable error cannot be "
        "repaired. Ask the provider to replace the GPU."
    ), message
    devices[2]["remapped_rows"]["uncorrectable"] = ceiling
    assert decide(counters.test_remapped_rows_below_ceiling, spec, devices) == ("passed", "")


@pytest.mark.parametrize("name", ECC_CLASSES)
def test_retired_pages_just_below_and_at_the_limit(name):
    spec, devices, _ = node(name, gpus=3)
    top = limit(spec, "retired_pages_max")
    devices[0]["retired_pages"] = None  # Ampere and later remap rows
    devices[1]["retired_pages"] = {"single_bit": top - 2, "double_bit": 1, "pending": False}
    devices[2]["retired_pages"] = {"single_bit": top - 1, "double_bit": 1, "pending": False}
    outcome, message = decide(counters.test_retired_pages_below_limit, spec, devices)
    assert outcome == "failed"
    assert message == (
        f"retired-page table near full (limit {top:.0f} of 64): {label(devices[2])}: {top} pages "
        "retired. When it is full, new ECC errors cannot be retired and crash jobs. Ask the "
        "provider to replace the GPU (RMA)."
    ), message
    devices[2]["retired_pages"]["double_bit"] = 0
    assert decide(counters.test_retired_pages_below_limit, spec, devices) == ("passed", "")


# ---- health: ECC, memory repair, throttling, power, PCIe, persistence, MIG, processes ----


def test_ecc_off_fails_naming_the_gpu_and_its_pending_mode():
    spec, devices, _ = node("h100", gpus=2)
    devices[1]["ecc"] = {"current": False, "pending": True}
    outcome, message = decide(health.test_ecc_enabled, spec, devices)
    assert outcome == "failed"
    assert message == (
        f"ECC is off: {label(devices[1])}: current False, pending True. Enable it with "
        "`nvidia-smi -e 1` and reboot (pending shows the state after the next reboot)."
    ), message
    assert decide(health.test_ecc_enabled, spec, devices[:1]) == ("passed", "")
    assert decide(health.test_ecc_enabled, ecc_off(spec), devices) == (
        "skipped",
        "h100 is expected to run with ECC off",
    )


@pytest.mark.parametrize("name", ["h100", "v100", "a100", "t4"])
def test_uncorrected_ecc_errors_from_one_up(name):
    spec, devices, _ = node(name, gpus=3)
    devices[1]["ecc_errors"] = dict(devices[1]["ecc_errors"], volatile_uncorrected=1,
                                    aggregate_uncorrected=4)  # fmt: skip
    devices[2]["ecc"] = {"current": False, "pending": False}  # off: test_ecc_enabled's failure
    devices[2]["ecc_errors"] = None
    outcome, message = decide(health.test_no_uncorrected_ecc_errors, spec, devices)
    assert outcome == "failed"
    assert message == (
        f"uncorrected ECC errors: {label(devices[1])}: 1 since boot, 4 lifetime. The GPU needs a "
        "reset and, if they recur, an RMA: ask the provider for another machine."
    ), message
    devices[1]["ecc_errors"]["volatile_uncorrected"] = 0
    assert decide(health.test_no_uncorrected_ecc_errors, spec, devices) == ("passed", "")
    devices[2]["ecc"] = None  # ECC mode unreadable: its counters are still judged
    assert decide(health.test_no_uncorrected_ecc_errors, spec, devices)[0] == "failed"


@pytest.mark.parametrize("name", NVIDIA)
def test_memory_repair_follows_the_architecture(name):
    spec = load_spec(name)
    major, minor = map(int, spec.expected_value("compute_capability").split("."))
    want = "remapped_rows" if (major, minor) >= (8, 0) else "retired_pages"
    assert health.memory_repair(spec) == want
    for arch, repair in (
        ("7.5", "retired_pages"),
        ("8.0", "remapped_rows"),
        ("10.0", "remapped_rows"),
    ):
        data = copy.deepcopy(spec.data)
        data["expect"]["compute_capability"]["value"] = arch
        assert health.memory_repair(Spec(data, spec.path)) == repair


def test_memory_repair_without_an_architecture_retires_pages():
    spec = load_spec("h100")
    data = copy.deepcopy(spec.data)
    data["expect"]["compute_capability"] = None
    assert health.memory_repair(Spec(data, spec.path)) == "retired_pages"


def test_pending_memory_repair_each_kind():
    spec, devices, _ = node("h100", gpus=4)
    rows = {"correctable": 0, "uncorrectable": 3, "failure": False, "pending": False}
    devices[0]["remapped_rows"] = dict(rows, pending=True)
    devices[1]["remapped_rows"] = dict(rows, failure=True, pending=True)
    devices[2]["retired_pages"] = {"pending": True, "single_bit": 0, "double_bit": 0}
    outcome, message = decide(health.test_no_pending_memory_repair, spec, devices)
    assert outcome == "failed"
    assert message == (
        f"memory repair outstanding: {label(devices[0])}: row remap pending (3 uncorrectable "
        f"rows); {label(devices[1])}: row remap FAILED (3 uncorrectable rows); "
        f"{label(devices[2])}: page retirement pending. Pending: reset the GPU (nvidia-smi -r) or "
        "reboot. Failed: the GPU must be replaced."
    ), message
    devices[0]["remapped_rows"]["pending"] = False
    devices[1]["remapped_rows"] = dict(rows)
    devices[2]["retired_pages"] = None  # NotSupported on Ampere+: not needed there
    assert decide(health.test_no_pending_memory_repair, spec, devices) == ("passed", "")
    devices[3]["remapped_rows"] = None  # the one this architecture needs
    outcome, message = decide(health.test_no_pending_memory_repair, spec, devices)
    assert outcome == "failed"
    assert "cannot judge: remapped_rows.pending of " + label(devices[3]) in message


def test_pending_memory_repair_before_ampere_needs_retired_pages():
    spec, devices, _ = node("v100", gpus=2)
    devices[0]["remapped_rows"] = None
    devices[1]["remapped_rows"] = None
    devices[0]["retired_pages"] = {"pending": False, "single_bit": 0, "double_bit": 0}
    devices[1]["retired_pages"] = {"pending": False, "single_bit": 0, "double_bit": 0}
    assert decide(health.test_no_pending_memory_repair, spec, devices) == ("passed", "")
    devices[1]["retired_pages"] = None
    outcome, message = decide(health.test_no_pending_memory_repair, spec, devices)
    assert outcome == "failed" and "retired_pages is not supported" in message, message


@pytest.mark.parametrize("name", NVIDIA)
def test_idle_throttle_reasons_member_by_member(name):
    spec, devices, _ = node(name, gpus=2)
    allowed = spec.expect("idle_throttle_reasons_allowed")
    for reason in allowed:
        devices[1]["throttle_reasons"] = [reason]
        assert decide(health.test_no_throttle_at_idle, spec, devices) == ("passed", ""), reason
    devices[1]["throttle_reasons"] = [*allowed, "sw_thermal_slowdown", "hw_slowdown"]
    outcome, message = decide(health.test_no_throttle_at_idle, spec, devices)
    assert outcome == "failed"
    assert message == (
        f"clocks held down at idle: {label(devices[1])}: hw_slowdown, sw_thermal_slowdown. "
        "hw_slowdown: the board's HW slowdown is asserted (a power-brake or thermal fault): reset "
        "the GPU (`nvidia-smi -r`) or reboot; if it stays, drain the node and ask the provider. "
        "sw_thermal_slowdown: the driver slows the GPU for heat at idle: check fans, airflow and "
        "the inlet temperature, or ask the provider."
    ), message
    devices[1]["throttle_reasons"] = ["made_up_reason"]  # a reason NVML may add later
    outcome, message = decide(health.test_no_throttle_at_idle, spec, devices)
    assert message.endswith("made_up_reason: an unknown reason: `nvidia-smi -q -d PERFORMANCE`."), (
        message
    )


@pytest.mark.parametrize("name", NVIDIA)
def test_power_limit_at_and_below_the_floor(name):
    spec, devices, _ = node(name, gpus=2)
    tdp, margin = spec.expected_value("tdp"), spec.data["expect"]["power_limit_margin"]
    floor = tdp * (1 - margin)
    devices[0]["power"]["limit_w"] = floor
    devices[1]["power"]["limit_w"] = floor - 0.5
    devices[1]["power"]["default_limit_w"] = float(tdp)
    outcome, message = decide(health.test_power_limit_not_capped, spec, devices)
    assert outcome == "failed"
    assert message == (
        f"power limit below {floor:.0f} W ({name} TDP {tdp} W less {margin:.0%}): "
        f"{label(devices[1])}: {floor - 0.5:.0f} W (default {float(tdp)} W). Throughput drops "
        "with it; `nvidia-smi -q -d POWER` shows who set it. Ask the provider, or restore the "
        "default limit."
    ), message
    devices[1]["power"]["limit_w"] = floor
    assert decide(health.test_power_limit_not_capped, spec, devices) == ("passed", "")


def test_power_margin_defaults_to_five_percent():
    spec, devices, _ = node("h100")
    spec = without(spec, "expect.power_limit_margin")
    devices[0]["power"]["limit_w"] = 700 * 0.95
    assert decide(health.test_power_limit_not_capped, spec, devices) == ("passed", "")
    devices[0]["power"]["limit_w"] = 700 * 0.95 - 0.5
    outcome, message = decide(health.test_power_limit_not_capped, spec, devices)
    assert outcome == "failed" and "power limit below 665 W (h100 TDP 700 W less 5%)" in message


@pytest.mark.parametrize("name", NVIDIA)
def test_pcie_generation_and_width_at_and_below(name):
    spec, devices, _ = node(name, gpus=2)
    want = spec.expect("pcie")
    gen, width = want["generation"], want["width"]
    devices[1]["pcie"].update(gen_max=gen - 1, gen_device_max=gen)
    devices[1]["pcie"].update(width_current=width // 2, width_max=width // 2)
    outcome, message = decide(health.test_pcie_generation, spec, devices)
    assert outcome == "failed"
    assert message == (
        f"PCIe link below Gen{want['generation']}: {label(devices[1])}: "
        f"Gen{want['generation'] - 1} max in this slot (device Gen{want['generation']}). A slot, "
        "riser or BIOS setting limits the link: host-device copies run at a fraction of their rate."
    ), message
    outcome, message = decide(health.test_pcie_width, spec, devices)
    assert outcome == "failed"
    assert message == (
        f"PCIe link narrower than x{want['width']} at its maximum (the widest this board and "
        f"slot can train, not the idle reading): {label(devices[1])}: max x{want['width'] // 2} "
        f"(now x{want['width'] // 2}). A half-width slot or riser halves host-device bandwidth: "
        "check the slot, riser and BIOS lane settings."
    ), message
    devices[1]["pcie"].update(width_max=want["width"])
    assert decide(health.test_pcie_width, spec, devices) == ("passed", "")  # idle x8 of x16
    devices[1]["pcie"].update(gen_max=want["generation"], width_current=want["width"])
    assert decide(health.test_pcie_generation, spec, devices) == ("passed", "")
    assert decide(health.test_pcie_width, spec, devices) == ("passed", "")


def test_a_class_without_a_pcie_link_skips():
    spec = load_spec("h100")
    data = copy.deepcopy(spec.data)
    data["expect"]["pcie"] = None
    outcome, message = decide(health.expected_pcie, Spec(data, spec.path))
    assert (outcome, message) == ("skipped", "h100 has no PCIe link to check")


def test_persistence_mode_off_fails_and_a_class_without_it_skips():
    spec, devices, _ = node("h100", gpus=2)
    devices[1]["persistence_mode"] = False
    outcome, message = decide(health.test_persistence_mode, spec, devices)
    assert outcome == "failed"
    assert message == (
        f"persistence mode off on {label(devices[1])}: with no client the driver tears the "
        "GPU down, so every CUDA start initialises it again (1-3 s per GPU) and settings such "
        "as application clocks revert. Start NVIDIA's persistence daemon, which turns the mode "
        "on for every GPU: `sudo systemctl enable --now nvidia-persistenced` (the legacy "
        "`nvidia-smi -pm 1` is near end-of-life: NVIDIA's Driver Persistence guide)."
    )
    devices[1]["persistence_mode"] = True
    assert decide(health.test_persistence_mode, spec, devices) == ("passed", "")
    data = copy.deepcopy(spec.data)
    data["expect"]["persistence_mode"]["value"] = False
    assert decide(health.test_persistence_mode, Spec(data, spec.path), devices) == (
        "skipped",
        "h100 does not expect persistence mode",
    )
    spec, devices, _ = node("rtx4090")
    assert decide(health.test_persistence_mode, spec, devices) == (
        "skipped",
        f"persistence mode does not apply to rtx4090 ({spec.title})",
    )


@pytest.mark.parametrize("want", [False, True])
def test_mig_state_each_way(want):
    spec, devices, _ = node("h100", gpus=2)
    spec.data["expect"]["mig"] = dict(spec.data["expect"]["mig"], value=want)
    for d in devices:
        d["mig"] = {"current": want, "pending": want}
    assert decide(health.test_mig_state, spec, devices) == ("passed", "")
    devices[1]["mig"]["current"] = not want
    outcome, message = decide(health.test_mig_state, spec, devices)
    assert outcome == "failed"
    assert message == (
        f"MIG expected {'on' if want else 'off'}: {label(devices[1])}: MIG "
        f"{'off' if want else 'on'}. With MIG on, a process sees one slice, not the whole GPU: "
        "`nvidia-smi -mig 0` and reset to disable it."
    ), message


def test_mig_checks_skip_on_a_class_without_mig():
    spec, devices, _ = node("l40s")
    title = spec.title
    assert decide(health.test_mig_state, spec, devices) == ("skipped", f"{title} has no MIG")
    assert decide(hidden.test_mig_mode_after_reset, spec, devices) == (
        "skipped",
        f"{title} has no MIG",
    )


def test_other_processes_are_named_and_our_own_is_not():
    spec, devices, facts = node("h100", gpus=2)
    facts.data["origin"] = {"kind": "live"}
    devices[0]["processes"] = [{"pid": os.getpid(), "used_bytes": 1}]
    assert decide(health.test_no_other_processes, facts, spec, devices) == ("passed", "")
    devices[1]["processes"] = [{"pid": 4242, "used_bytes": None}, {"pid": 77, "used_bytes": 5}]
    outcome, message = decide(health.test_no_other_processes, facts, spec, devices)
    assert outcome == "failed"
    assert message == (
        f"other processes hold the GPU: {label(devices[1])}: pids 4242, 77. They take memory and "
        "time: measurements and memory checks are wrong until they stop."
    ), message
    facts.data["origin"] = {"kind": "recorded"}  # a replay: this pid is no process of its
    devices[1]["processes"] = []
    outcome, message = decide(health.test_no_other_processes, facts, spec, devices)
    assert outcome == "failed" and f"{label(devices[0])}: pids {os.getpid()}" in message


@pytest.mark.parametrize("name", NVLINK)
def test_nvlink_up_at_and_one_below_the_links_per_device(name):
    spec, devices, _ = node(name, gpus=2)
    want = spec.expect("gpu_link")["links_per_device"]
    devices[1]["nvlink"] = [{"link": i, "active": i != 0} for i in range(want)]
    devices[0]["nvlink"] = [{"link": i, "active": True} for i in range(want)]
    outcome, message = decide(health.test_nvlink_up, spec, devices, 2)
    assert outcome == "failed"
    assert message == (
        f"NVLink down: {label(devices[1])}: {want - 1}/{want} links active. Collectives fall back "
        "to PCIe at a fraction of the bandwidth: `nvidia-smi nvlink -s` shows which; the node "
        "needs service."
    ), message
    devices[1]["nvlink"].append({"link": want, "active": True})  # a spare link makes up for it
    assert decide(health.test_nvlink_up, spec, devices, 2) == ("passed", "")
    assert decide(health.test_nvlink_up, spec, devices, 1) == (
        "skipped",
        "one GPU: no peer to link to (run with --gpus N on a multi-GPU node)",
    )
    spec, devices, _ = node("l40s", gpus=2)
    assert decide(health.test_nvlink_up, spec, devices, 2) == (
        "skipped",
        "l40s has no NVLink (pcie_only)",
    )


# ---- hidden state: next reboot's ECC and MIG, unlisted memory, identities, topology ----


def test_ecc_turning_off_at_the_next_reboot():
    spec, devices, _ = node("h100", gpus=3)
    devices[1]["ecc"] = {"current": True, "pending": False}
    devices[2]["ecc"] = {"current": False, "pending": False}  # off now: test_ecc_enabled's
    outcome, message = decide(hidden.test_ecc_stays_on_after_reboot, spec, devices)
    assert outcome == "failed"
    assert message == (
        f"ECC turns off at the next reboot on {label(devices[1])} (on now, pending off): someone "
        "ran `nvidia-smi -e 0`. Undo it with `nvidia-smi -e 1` before the machine reboots."
    ), message
    devices[1]["ecc"]["pending"] = True
    assert decide(hidden.test_ecc_stays_on_after_reboot, spec, devices) == ("passed", "")
    assert decide(hidden.test_ecc_stays_on_after_reboot, ecc_off(spec), devices) == (
        "skipped",
        "h100 is expected to run with ECC off",
    )


@pytest.mark.parametrize("want", [False, True])
def test_mig_mode_changing_at_the_next_reset(want):
    spec, devices, _ = node("h100", gpus=3)
    spec.data["expect"]["mig"] = dict(spec.data["expect"]["mig"], value=want)
    devices[0]["mig"] = {"current": want, "pending": want}
    devices[1]["mig"] = {"current": want, "pending": not want}  # turns away at the reset
    devices[2]["mig"] = {"current": not want, "pending": want}  # comes back: test_mig_state's
    on, off = ("on", "off") if want else ("off", "on")
    outcome, message = decide(hidden.test_mig_mode_after_reset, spec, devices)
    assert outcome == "failed"
    assert message == (
        f"MIG turns {off} at the next GPU reset or reboot: {label(devices[1])}: {on} now, {off} "
        f"after reset. Set it back with `nvidia-smi -mig {int(want)}` before then."
    ), message
    devices[1]["mig"]["pending"] = want
    assert decide(hidden.test_mig_mode_after_reset, spec, devices) == ("passed", "")


@pytest.mark.parametrize("name", NVIDIA)
def test_unlisted_memory_at_and_above_the_allowance(name):
    spec, devices, _ = node(name, gpus=2)
    allowance = spec.data["expect"]["unlisted_memory_allowance"]["value"]
    for d, extra in zip(devices, (0, MIB), strict=True):
        d["processes"] = [{"pid": 1, "used_bytes": 3 * MIB}, {"pid": 2, "used_bytes": None}]
        d["memory_free_bytes"] = d["memory_total_bytes"] - 3 * MIB - allowance * MIB - extra
    outcome, message = decide(hidden.test_memory_in_use_is_listed, spec, devices)
    assert outcome == "failed"
    assert message == (
        f"GPU memory held by no listed process (allowance {allowance:,.0f} MiB for the driver's "
        f"reservation): {label(devices[1])}: {allowance + 4:,.0f} MiB in use, 3 MiB held by "
        f"listed processes, {allowance + 1:,.0f} MiB held by no listed process. A process in "
        "another container or PID namespace holds it: `nvidia-smi` on the host shows it; stop it "
        "before measuring."
    ), message
    devices[1]["memory_free_bytes"] += MIB
    assert decide(hidden.test_memory_in_use_is_listed, spec, devices) == ("passed", "")


def test_a_class_without_an_unlisted_memory_allowance_fails_closed():
    spec, devices, _ = node("h100")
    outcome, message = decide(
        hidden.test_memory_in_use_is_listed, without(spec, "expect.unlisted_memory_allowance"),
        devices,
    )  # fmt: skip
    assert (outcome, message) == (
        "failed",
        "h100's spec states no unlisted_memory_allowance (MiB): add one with its source to "
        "expected/{spec.name}.json",
    )


@pytest.mark.parametrize("key", ["uuid", "serial", "pci.bus_id"])
def test_two_gpus_with_one_identity(key):
    spec, devices, _ = node("h100", gpus=3)
    first, _, second = key.partition(".")
    value = devices[0][first][second] if second else devices[0][first]
    target = devices[2][first] if second else devices[2]
    target[second or first] = value
    outcome, message = decide(hidden.test_gpu_identities_unique, spec, devices)
    assert outcome == "failed"
    labels = f"{label(devices[0])}, GPU 2"
    assert message.startswith(f"two GPUs report one identity: {key} {value} on {labels}"), message
    assert "GPU 1" not in message


def test_serials_not_supported_are_not_one_identity():
    spec, devices, _ = node("rtx4090", gpus=2)
    for d in devices:
        d["serial"] = None
    assert decide(hidden.test_gpu_identities_unique, spec, devices) == ("passed", "")
    spec, devices, _ = node("mi300x", gpus=2)
    devices[1]["serial"] = devices[0]["serial"] = "S1"  # AMD: told apart by PCI address only
    assert decide(hidden.test_gpu_identities_unique, spec, devices) == ("passed", "")
    devices[1]["pci"]["bus_id"] = devices[0]["pci"]["bus_id"]
    assert decide(hidden.test_gpu_identities_unique, spec, devices)[0] == "failed"
    spec, devices, _ = node("m4pro")
    assert decide(hidden.test_gpu_identities_unique, spec, devices) == (
        "skipped",
        f"{spec.title} has one device: nothing to tell apart",
    )


def test_topology_missing_a_gpu_or_a_pair():
    _, devices, facts = node("h100", gpus=3)
    assert decide(hidden.test_topology_lists_every_gpu, facts, devices) == ("passed", "")
    facts.data["topology"]["pairs"] = [
        p for p in facts.data["topology"]["pairs"] if sorted(p["gpus"]) != [1, 2]
    ]
    outcome, message = decide(hidden.test_topology_lists_every_gpu, facts, devices)
    assert outcome == "failed"
    assert message == (
        "NVML's topology lists GPUs [0, 1, 2] and 2 pairs for GPUs [0, 1, 2] (3 pairs, missing "
        "[(1, 2)]). Re-record the facts (`rigcheck facts -o FILE`); `nvidia-smi topo -m` shows "
        "what NVML sees."
    ), message
    facts.data["topology"]["gpus"] = facts.data["topology"]["gpus"][:2]
    outcome, message = decide(hidden.test_topology_lists_every_gpu, facts, devices)
    assert message.startswith("NVML's topology lists GPUs [0, 1] and 2 pairs"), message
    assert decide(hidden.test_topology_lists_every_gpu, facts, devices[:1]) == (
        "skipped",
        "one GPU: no pairs to list",
    )


# ---- host limits: /dev/shm, memlock, CPUs, RAM, IOMMU ----


@pytest.mark.parametrize("name", GPU_CLASSES)
def test_shm_at_and_below_the_floor(name):
    spec, _, facts = node(name)
    floor = limit(spec, "shm_min_bytes")
    facts.data["host_limits"]["shm_bytes"] = floor
    assert decide(host_limits.test_shm_size, spec, facts) == ("passed", "")
    facts.data["host_limits"]["shm_bytes"] = floor - MIB
    outcome, message = decide(host_limits.test_shm_size, spec, facts)
    assert outcome == "failed"
    assert message == (
        f"/dev/shm is {(floor - MIB) / MIB:.0f} MiB, below {floor / MIB:.0f} MiB: DataLoader "
        "workers die with 'bus error' and NCCL's shared-memory transport fails. In Docker, run "
        "with --shm-size=1g (or --ipc=host); in Kubernetes mount an emptyDir with medium: Memory."
    ), message


def test_host_limits_of_macos_skip():
    spec, _, facts = node("m4pro")
    assert decide(host_limits.test_shm_size, spec, facts) == (
        "skipped",
        "m4pro is macOS: no /dev/shm, cgroups or IOMMU groups to check",
    )


def test_memlock_with_and_without_rdma():
    spec, _, facts = node("h100")
    limits = facts.data["host_limits"]
    limits["memlock"] = {"unlimited": False, "soft_bytes": 65536, "hard_bytes": 65536}
    limits["rdma_devices"] = 2
    outcome, message = decide(host_limits.test_memlock_unlimited_with_rdma, spec, facts)
    assert outcome == "failed"
    assert message == (
        "locked-memory limit is 65536 bytes with 2 RDMA devices: NCCL cannot register buffers for "
        "InfiniBand/RoCE and falls back to sockets or fails. Set `ulimit -l unlimited` "
        "(limits.conf memlock, or docker --ulimit memlock=-1)."
    ), message
    limits["rdma_devices"] = 0
    assert decide(host_limits.test_memlock_unlimited_with_rdma, spec, facts) == (
        "skipped",
        "no InfiniBand/RoCE device: memlock only limits RDMA registration",
    )
    limits["rdma_devices"] = 1
    limits["memlock"] = {"unlimited": True, "soft_bytes": None, "hard_bytes": None}
    assert decide(host_limits.test_memlock_unlimited_with_rdma, spec, facts) == ("passed", "")


@pytest.mark.parametrize("name", GPU_CLASSES)
@pytest.mark.parametrize("gpus", [1, 8])
def test_cpus_per_gpu_at_and_below_and_under_a_quota(name, gpus):
    spec, _, facts = node(name)
    per_gpu = limit(spec, "cpus_per_gpu_min")
    limits = facts.data["host_limits"]
    limits.update(cpus_usable=per_gpu * gpus, cgroup_cpu_limit=None)
    assert decide(host_limits.test_cpus_per_gpu, spec, facts, gpus) == ("passed", "")
    limits["cpus_usable"] = per_gpu * gpus - 1
    outcome, message = decide(host_limits.test_cpus_per_gpu, spec, facts, gpus)
    assert outcome == "failed"
    assert message == (
        f"{per_gpu * gpus - 1:g} CPUs usable for {gpus} GPU(s), below {per_gpu:g} per GPU: input "
        "pipelines starve the GPUs. A cgroup quota or taskset limits this process: ask for more "
        "CPUs (Slurm --cpus-per-gpu, Kubernetes resources.requests.cpu)."
    ), message
    limits.update(cpus_usable=per_gpu * gpus * 10, cgroup_cpu_limit=per_gpu * gpus - 0.5)
    outcome, message = decide(host_limits.test_cpus_per_gpu, spec, facts, gpus)
    assert outcome == "failed" and message.startswith(f"{per_gpu * gpus - 0.5:g} CPUs usable")
    limits["cgroup_cpu_limit"] = per_gpu * gpus
    assert decide(host_limits.test_cpus_per_gpu, spec, facts, gpus) == ("passed", "")


@pytest.mark.parametrize("name", GPU_CLASSES)
def test_host_ram_at_and_below_the_ratio_and_under_a_cgroup(name):
    spec, _, facts = node(name)
    gpus = 2
    ratio = limit(spec, "host_ram_per_gpu_memory_min")
    need = ratio * gpus * spec.memory_bytes
    facts.data["host"]["memory_total_bytes"] = int(need)
    facts.data["host_limits"]["cgroup_memory_bytes"] = None
    assert decide(host_limits.test_host_ram_for_gpu_memory, spec, facts, gpus) == ("passed", "")
    facts.data["host"]["memory_total_bytes"] = int(need) - 1
    outcome, message = decide(host_limits.test_host_ram_for_gpu_memory, spec, facts, gpus)
    assert outcome == "failed"
    assert message == (
        f"host RAM {(int(need) - 1) / 2**30:.0f} GiB, below {ratio:g} x the GPUs' {gpus} x "
        f"{spec.memory_bytes / 2**30:.0f} GiB ({need / 2**30:.0f} GiB): loading or saving a "
        "checkpoint will fail or swap. Ask for a larger memory limit or a larger machine."
    ), message
    facts.data["host"]["memory_total_bytes"] = int(need) * 4
    facts.data["host_limits"]["cgroup_memory_bytes"] = int(need) - 1
    assert decide(host_limits.test_host_ram_for_gpu_memory, spec, facts, gpus)[0] == "failed"


def test_cpu_and_ram_checks_skip_without_a_discrete_gpu():
    for name in ("cpu", "m4pro"):
        spec, _, facts = node(name)
        assert decide(host_limits.test_cpus_per_gpu, spec, facts, 1) == (
            "skipped",
            f"{name} has no discrete GPU to feed",
        )
        assert decide(host_limits.test_host_ram_for_gpu_memory, spec, facts, 1) == (
            "skipped",
            f"{name} has no discrete GPU memory to stage",
        )


PASSTHROUGH = ["iommu=pt", "iommu.passthrough=1", "intel_iommu=off", "amd_iommu=off", "iommu=off"]


@pytest.mark.parametrize("flag", PASSTHROUGH)
def test_iommu_each_passthrough_flag_passes(flag):
    spec, _, facts = node("h100", gpus=2)
    facts.data["host_limits"]["iommu"] = {"groups": 90, "cmdline": ["intel_iommu=on", flag]}
    assert decide(host_limits.test_iommu_not_translating_p2p, spec, facts, 2) == ("passed", "")


def test_iommu_translating_fails_and_off_passes():
    spec, _, facts = node("h100", gpus=2)
    facts.data["host_limits"]["iommu"] = {"groups": 90, "cmdline": ["intel_iommu=on", "iommu=nopt"]}
    outcome, message = decide(host_limits.test_iommu_not_translating_p2p, spec, facts, 2)
    assert outcome == "failed"
    assert message == (
        "the IOMMU translates DMA (90 groups, boot flags intel_iommu=on, iommu=nopt; no "
        "per-device domain type to read): GPU peer-to-peer over PCIe is redirected through the "
        "root complex or blocked, and NCCL hangs "
        "or slows down. Boot with iommu=pt (or disable the IOMMU in the BIOS) as NCCL's "
        "troubleshooting guide says."
    ), message
    facts.data["host_limits"]["iommu"] = {"groups": 1, "cmdline": []}
    outcome, message = decide(host_limits.test_iommu_not_translating_p2p, spec, facts, 2)
    assert "(1 groups, boot flags none; no per-device domain type to read)" in message
    facts.data["host_limits"]["iommu"] = {"groups": 0, "cmdline": []}
    assert decide(host_limits.test_iommu_not_translating_p2p, spec, facts, 2) == ("passed", "")
    assert decide(host_limits.test_iommu_not_translating_p2p, spec, facts, 1) == (
        "skipped",
        "fewer than two GPUs: no peer-to-peer traffic for an IOMMU to block",
    )


@pytest.mark.parametrize("virt", ["kvm", "amazon", "microsoft", "hypervisor (flag)", "docker"])
def test_iommu_in_a_vm_skips_and_in_a_container_is_judged(virt):
    spec, _, facts = node("h100", gpus=2)
    facts.data["host"]["virtualization"] = virt
    facts.data["host_limits"]["iommu"] = {"groups": 90, "cmdline": []}
    outcome, message = decide(host_limits.test_iommu_not_translating_p2p, spec, facts, 2)
    if virt == "docker":  # a container shares the host's kernel and its IOMMU
        assert outcome == "failed"
    else:
        assert (outcome, message) == (
            "skipped",
            "a VM: the hypervisor, not this kernel, decides the IOMMU mode",
        )


# ---- idle state: applications clocks, temperature, firmware ----


@pytest.mark.parametrize("kind", ["sm", "mem"])
def test_applications_clocks_below_and_at_the_default(kind):
    _, devices, _ = node("h100", gpus=2)
    clocks = devices[1]["applications_clocks"]
    default = clocks[f"default_{kind}_mhz"]
    clocks[f"{kind}_mhz"] = default - 1
    outcome, message = decide(idle.test_applications_clocks_at_default, devices)
    assert outcome == "failed"
    assert message == (
        f"applications clocks set below the board's default: {label(devices[1])}: {kind} "
        f"{default - 1} MHz (default {default} MHz). Someone ran `nvidia-smi -ac`; every kernel "
        "runs slower. Restore them with `nvidia-smi -rac` (and check `nvidia-smi -q -d CLOCK` for "
        "locked clocks: `nvidia-smi -rgc`)."
    ), message
    clocks[f"{kind}_mhz"] = default
    assert decide(idle.test_applications_clocks_at_default, devices) == ("passed", "")
    for d in devices:
        d["applications_clocks"] = None
    assert decide(idle.test_applications_clocks_at_default, devices) == (
        "skipped",
        "no GPU reports applications clocks (GeForce boards have none)",
    )


@pytest.mark.parametrize("name", NVIDIA)
def test_idle_temperature_at_and_above_the_margin(name):
    spec, devices, _ = node(name, gpus=2)
    margin = limit(spec, "idle_temperature_margin_c")
    for d in devices:
        d["temperature_thresholds"] = {"slowdown_c": 90, "shutdown_c": 95}
        d["temperature_c"] = 90 - margin
    assert decide(idle.test_idle_temperature_below_slowdown, spec, devices) == ("passed", "")
    devices[1]["temperature_c"] = 90 - margin + 1
    outcome, message = decide(idle.test_idle_temperature_below_slowdown, spec, devices)
    assert outcome == "failed"
    assert message == (
        f"GPUs hot at idle, within {margin:.0f} C of their slowdown threshold: "
        f"{label(devices[1])}: {90 - margin + 1} C (slows down at 90 C, shuts down at 95 C). "
        "Under load they will throttle or shut down: check fans, airflow and the inlet "
        "temperature, or ask the provider."
    ), message


@pytest.mark.parametrize("part", ["vbios", "inforom_image"])
def test_firmware_that_differs_in_one_part(part):
    _, devices, _ = node("h100", gpus=3)
    devices[2]["firmware"][part] = "9.9.9"
    outcome, message = decide(idle.test_firmware_identical_across_gpus, devices)
    assert outcome == "failed"
    fw = devices[0]["firmware"]
    odd = {**fw, part: "9.9.9"}
    assert message.startswith(
        f"GPUs of this node run different firmware: VBIOS {fw['vbios']}, InfoROM "
        f"{fw['inforom_image']} on {label(devices[0])}, {label(devices[1])}; VBIOS "
        f"{odd['vbios']}, InfoROM {odd['inforom_image']} on {label(devices[2])}. Mixed firmware "
        "means a GPU was swapped without an update; some fixes (ECC, NVLink training) are in "
        "firmware. Ask the provider to flash them all to the same version."
    ), message
    devices[2]["firmware"][part] = fw[part]
    assert decide(idle.test_firmware_identical_across_gpus, devices) == ("passed", "")


# ---- a fact the class needs, Not Supported (NVML's None), fails closed naming it ----

NOT_SUPPORTED = [  # (suite, check, the device key NVML answered NotSupported for, path named)
    (counters, "test_pcie_replays_within_limit", "pcie_replays", "pcie_replays"),
    (counters, "test_nvlink_error_counters", "nvlink_errors", "nvlink_errors"),
    (health, "test_ecc_enabled", "ecc", "ecc.current"),
    (health, "test_no_uncorrected_ecc_errors", "ecc_errors", "ecc_errors.volatile_uncorrected"),
    (health, "test_no_throttle_at_idle", "throttle_reasons", "throttle_reasons"),
    (health, "test_power_limit_not_capped", "power", "power.limit_w"),
    (health, "test_pcie_generation", "pcie", "pcie.gen_max"),
    (health, "test_pcie_width", "pcie", "pcie.width_max"),
    (health, "test_persistence_mode", "persistence_mode", "persistence_mode"),
    (health, "test_mig_state", "mig", "mig.current"),
    (health, "test_no_other_processes", "processes", "processes"),
    (health, "test_nvlink_up", "nvlink", "nvlink"),
    (hidden, "test_mig_mode_after_reset", "mig", "mig.current"),
    (hidden, "test_memory_in_use_is_listed", "memory_free_bytes", "memory_free_bytes"),
    (idle, "test_idle_temperature_below_slowdown", "temperature_thresholds",
     "temperature_thresholds"),
    (idle, "test_firmware_identical_across_gpus", "firmware", "firmware"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("suite", "check", "key", "path"), NOT_SUPPORTED, ids=[c[1] for c in NOT_SUPPORTED]
)
def test_a_needed_fact_not_supported_fails_naming_it(suite, check, key, path):
    spec, devices, facts = node("h100", gpus=2)
    spec.data["expect"]["mig"] = dict(spec.data["expect"]["mig"], value=False)
    devices[1][key] = None
    given = {"spec": spec, "facts": facts, "devices": devices, "gpus": devices,
             "nvidia_devices": devices, "expected_gpus": 2}  # fmt: skip
    function = getattr(suite, check)
    names = inspect.signature(function).parameters  # the check's own, through any wrapper
    assert decide(function, *(given[n] for n in names)) == (
        "failed",
        f"cannot judge: {path} of {label(devices[1])}: {key} is not supported by this device "
        "or driver (NVML: Not Supported), as in a vGPU guest. This class needs it: run on bare "
        "metal or GPU passthrough, or upgrade the driver.",
    )


def test_a_lone_gpu_without_firmware_versions_fails_closed():
    _, devices, _ = node("h100")
    devices[0]["firmware"] = None
    outcome, message = decide(idle.test_firmware_identical_across_gpus, devices)
    assert outcome == "failed" and "firmware is not supported" in message, message


def test_the_lifetime_ecc_count_is_read_as_required():
    """What the fuzz learns from a replay: which device facts a check accepts as NotSupported."""
    spec, devices, _ = node("h100", gpus=2)
    devices[1]["ecc_errors"]["volatile_uncorrected"] = 2
    typed.start_recording()
    decide(health.test_no_uncorrected_ecc_errors, spec, devices)
    _, unsupported_ok = typed.stop_recording()
    assert unsupported_ok == set()


def test_ecc_counts_after_a_gpu_that_does_not_split_them():
    spec, devices, _ = node("h100", gpus=2)
    devices[0]["ecc_by_location"] = None  # not split: the next GPU is still judged
    devices[1]["ecc_by_location"]["sram_uncorrected_volatile"] = 1
    outcome, message = decide(counters.test_ecc_counts_within_ceilings, spec, devices)
    assert outcome == "failed" and f"{label(devices[1])}: 1 SRAM uncorrected" in message


def test_two_gpus_changing_mig_mode_are_both_named():
    spec, devices, _ = node("h100", gpus=2)
    for d in devices:
        d["mig"] = {"current": False, "pending": True}
    outcome, message = decide(hidden.test_mig_mode_after_reset, spec, devices)
    assert outcome == "failed"
    assert (
        f": {label(devices[0])}: off now, on after reset; {label(devices[1])}: off now, on after "
        "reset. Set it back" in message
    ), message


# The AMD checks added with amdsmi (issue 12): the idle-temperature margin at and one degree
# past its limit; amdgpu's kernel-log lines named to their GPU, unknown lines judged.
amd_idle = importlib.import_module("suites.facts.test_amd_idle")
kernel_log = importlib.import_module("suites.facts.test_kernel_log")


def test_idle_hotspot_at_and_one_degree_past_the_margin():
    spec, devices, _ = node("mi300x", gpus=2)
    margin = health_limit(spec, "idle_temperature_margin_c")
    t = devices[1]["amd_temperature"]
    t["hotspot_c"] = t["slowdown_c"] - margin
    assert decide(amd_idle.test_amd_idle_temperature_below_slowdown, spec, devices) == (
        "passed",
        "",
    )
    t["hotspot_c"] += 1
    outcome, message = decide(amd_idle.test_amd_idle_temperature_below_slowdown, spec, devices)
    assert outcome == "failed"
    assert message == (
        f"GPUs hot at idle, within {margin:.0f} C of their slowdown threshold: "
        f"{label(devices[1])}: hotspot {t['hotspot_c']} C (slows down at {t['slowdown_c']} C, "
        f"shuts down at {t['shutdown_c']} C). Under load they will throttle or shut down: check "
        "fans, airflow and the inlet temperature (`amd-smi metric --temperature`, `amd-smi static "
        "--limit`), or ask the provider."
    )


RAS = "{1}uncorrectable hardware error(ERREVENT_ATHUB_INTERRUPT) detected!"
ODD = "amdgpu: something new the catalogue does not name"


def test_amdgpu_lines_name_their_gpu_and_unknown_lines_fail():
    spec, devices, facts = node("mi300x", gpus=2)
    bus = devices[1]["pci"]["bus_id"]
    facts.data["kernel_log"]["amdgpu_events"] = [
        {"t_s": 10.0, "bus_id": bus.upper(), "text": RAS},  # the kernel prints it either case
        {"t_s": 11.0, "bus_id": "0000:ee:00.0", "text": ODD},
    ]
    outcome, message = decide(kernel_log.test_no_amdgpu_faults, spec, facts, devices)
    assert outcome == "failed"
    ras = amdgpu_log.classify(RAS)
    window = kernel_log._window(facts)
    assert message == (
        f"the kernel log ({window}) has amdgpu fault lines: "
        f"{ras.name} x1 on {label(devices[1])}: {ras.meaning} ({ras.cause} fault). "
        f"To do: {ras.action} | "
        f"unknown x1 on PCI 0000:ee:00.0 (no GPU torch sees): unclassified: {ODD!r} (machine "
        f"fault). To do: read the line and ask the provider. Patterns: {amdgpu_log.SOURCE}."
    )


def test_no_amdgpu_lines_pass():
    spec, devices, facts = node("mi300x", gpus=2)
    facts.data["kernel_log"]["amdgpu_events"] = []
    assert decide(kernel_log.test_no_amdgpu_faults, spec, facts, devices) == ("passed", "")
