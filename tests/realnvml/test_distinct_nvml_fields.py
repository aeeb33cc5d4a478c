"""Each NVML fact holds exactly the field of nvml.h it names: every machine profile with every
number distinct (rigcheck/testing/nvml_sim/distinct.py), read through the real pynvml under
every driver generation. tox runs this folder again with the oldest nvidia-ml-py
(tools/oldest_binding.py, 12.535.108), so both ends of the binding range are covered.

On the captured profiles a probe that reads a field's neighbour passes (both ECC counts 0, the
link at its maximum width); with distinct values it cannot: the swaps at the end show it.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from rigcheck.facts.nvidia import counters
from rigcheck.facts.nvidia import nvml as nvml_probe
from rigcheck.facts.nvidia.nvml import probe_nvidia, reason_names
from rigcheck.facts.probe import is_error
from rigcheck.testing.distinct import equal_pairs, get, swapped
from rigcheck.testing.nvml_sim import DRIVERS, MACHINES, driver_profile, simulated_nvml
from rigcheck.testing.nvml_sim.distinct import SWAPPABLE, distinct_machine, numbered_machine


def ecc(kind: str):
    """nvmlDeviceGetTotalEccErrors: the simulator's total of the DRAM and SRAM counters."""

    def total(gpu):
        counts = gpu.get("ecc_errors")
        return None if counts is None else counts[f"dram_{kind}"] + counts[f"sram_{kind}"]

    return total


def at(*path, scale=None):
    """The profile's value at `path` (None: not answered), divided by `scale` (mW to W)."""

    def value(gpu):
        found = get(gpu, path)
        return found if found is None or scale is None else found / scale

    return value


def flag(key, which):
    """One of a call's 0/1 out-parameters, as the probe stores it (a bool)."""
    return lambda gpu: None if gpu.get(key) is None else bool(gpu[key][which])


# fact (a path in the device record) -> (the C call, the nvml.h parameter or struct field it is,
# its value in the GPU's profile). The profile keys are the nvml.h names the simulator writes.
FIELDS = {
    "memory_total_bytes": ("nvmlDeviceGetMemoryInfo", "nvmlMemory_t.total", at("memory", "total")),
    "memory_free_bytes": ("nvmlDeviceGetMemoryInfo", "nvmlMemory_t.free", at("memory", "free")),
    "ecc_errors.volatile_corrected": (
        "nvmlDeviceGetTotalEccErrors",
        "CORRECTED, VOLATILE_ECC",
        ecc("corrected_volatile"),
    ),
    "ecc_errors.volatile_uncorrected": (
        "nvmlDeviceGetTotalEccErrors",
        "UNCORRECTED, VOLATILE_ECC",
        ecc("uncorrected_volatile"),
    ),
    "ecc_errors.aggregate_corrected": (
        "nvmlDeviceGetTotalEccErrors",
        "CORRECTED, AGGREGATE_ECC",
        ecc("corrected_aggregate"),
    ),
    "ecc_errors.aggregate_uncorrected": (
        "nvmlDeviceGetTotalEccErrors",
        "UNCORRECTED, AGGREGATE_ECC",
        ecc("uncorrected_aggregate"),
    ),
    "remapped_rows.correctable": (
        "nvmlDeviceGetRemappedRows",
        "corrRows",
        at("remapped_rows", "correctable"),
    ),
    "remapped_rows.uncorrectable": (
        "nvmlDeviceGetRemappedRows",
        "uncRows",
        at("remapped_rows", "uncorrectable"),
    ),
    "remapped_rows.pending": (
        "nvmlDeviceGetRemappedRows",
        "isPending",
        flag("remapped_rows", "pending"),
    ),
    "remapped_rows.failure": (
        "nvmlDeviceGetRemappedRows",
        "failureOccurred",
        flag("remapped_rows", "failure"),
    ),
    "ecc.current": ("nvmlDeviceGetEccMode", "current", flag("ecc_mode", 0)),
    "ecc.pending": ("nvmlDeviceGetEccMode", "pending", flag("ecc_mode", 1)),
    "clocks.sm_mhz": ("nvmlDeviceGetClockInfo", "NVML_CLOCK_SM", at("clocks", "sm")),
    "clocks.mem_mhz": ("nvmlDeviceGetClockInfo", "NVML_CLOCK_MEM", at("clocks", "mem")),
    "clocks.sm_max_mhz": ("nvmlDeviceGetMaxClockInfo", "NVML_CLOCK_SM", at("max_clocks", "sm")),
    "clocks.mem_max_mhz": ("nvmlDeviceGetMaxClockInfo", "NVML_CLOCK_MEM", at("max_clocks", "mem")),
    "temperature_c": ("nvmlDeviceGetTemperature", "NVML_TEMPERATURE_GPU", at("temperature_c")),
    "throttle_reasons": (
        "nvmlDeviceGetCurrentClocksEventReasons",
        "clocksEventReasons",
        lambda g: reason_names(g["clock_event_reasons"]),
    ),
    "power.limit_w": (
        "nvmlDeviceGetEnforcedPowerLimit",
        "limit (mW)",
        at("power", "enforced_limit_mw", scale=1000),
    ),
    "power.default_limit_w": (
        "nvmlDeviceGetPowerManagementDefaultLimit",
        "defaultLimit (mW)",
        at("power", "default_limit_mw", scale=1000),
    ),
    "power.max_limit_w": (
        "nvmlDeviceGetPowerManagementLimitConstraints",
        "maxLimit (mW)",
        at("power", "max_limit_mw", scale=1000),
    ),
    "power.draw_w": ("nvmlDeviceGetPowerUsage", "power (mW)", at("power", "draw_mw", scale=1000)),
    "pcie.gen_current": (
        "nvmlDeviceGetCurrPcieLinkGeneration",
        "currLinkGen",
        at("pcie", "gen_current"),
    ),
    "pcie.gen_max": ("nvmlDeviceGetMaxPcieLinkGeneration", "maxLinkGen", at("pcie", "gen_max")),
    "pcie.gen_device_max": (
        "nvmlDeviceGetGpuMaxPcieLinkGeneration",
        "maxLinkGenDevice",
        at("pcie", "gen_device_max"),
    ),
    "pcie.width_current": (
        "nvmlDeviceGetCurrPcieLinkWidth",
        "currLinkWidth",
        at("pcie", "width_current"),
    ),
    "pcie.width_max": ("nvmlDeviceGetMaxPcieLinkWidth", "maxLinkWidth", at("pcie", "width_max")),
    "pcie_replays": ("nvmlDeviceGetPcieReplayCounter", "value", at("pcie", "replays")),
    "mig.current": ("nvmlDeviceGetMigMode", "currentMode", flag("mig_mode", 0)),
    "mig.pending": ("nvmlDeviceGetMigMode", "pendingMode", flag("mig_mode", 1)),
    "fabric.status": (
        "nvmlDeviceGetGpuFabricInfo",
        "nvmlGpuFabricInfo_t.status",
        at("fabric", "status"),
    ),
    "fabric.clique_id": (
        "nvmlDeviceGetGpuFabricInfo",
        "nvmlGpuFabricInfo_t.cliqueId",
        at("fabric", "clique_id"),
    ),
    **{
        f"ecc_by_location.{w}_{k}_{s}": (
            "nvmlDeviceGetMemoryErrorCounter",
            f"{k.upper()}, {s.upper()}_ECC, {w.upper()}",
            at("ecc_errors", f"{w}_{k}_{s}"),
        )
        for w in ("dram", "sram")
        for k in ("corrected", "uncorrected")
        for s in ("volatile", "aggregate")
    },
    "applications_clocks.sm_mhz": (
        "nvmlDeviceGetApplicationsClock",
        "NVML_CLOCK_SM",
        at("applications_clocks", "sm"),
    ),
    "applications_clocks.mem_mhz": (
        "nvmlDeviceGetApplicationsClock",
        "NVML_CLOCK_MEM",
        at("applications_clocks", "mem"),
    ),
    "applications_clocks.default_sm_mhz": (
        "nvmlDeviceGetDefaultApplicationsClock",
        "NVML_CLOCK_SM",
        at("default_applications_clocks", "sm"),
    ),
    "applications_clocks.default_mem_mhz": (
        "nvmlDeviceGetDefaultApplicationsClock",
        "NVML_CLOCK_MEM",
        at("default_applications_clocks", "mem"),
    ),
    "temperature_thresholds.slowdown_c": (
        "nvmlDeviceGetTemperatureThreshold",
        "NVML_TEMPERATURE_THRESHOLD_SLOWDOWN",
        at("temperature_thresholds", "slowdown_c"),
    ),
    "temperature_thresholds.shutdown_c": (
        "nvmlDeviceGetTemperatureThreshold",
        "NVML_TEMPERATURE_THRESHOLD_SHUTDOWN",
        at("temperature_thresholds", "shutdown_c"),
    ),
    "clock_limits.sm_app_target_mhz": (
        "nvmlDeviceGetClock",
        "NVML_CLOCK_ID_APP_CLOCK_TARGET",
        at("clock_ids_sm", "app_target"),
    ),
    "clock_limits.sm_app_default_mhz": (
        "nvmlDeviceGetClock",
        "NVML_CLOCK_ID_APP_CLOCK_DEFAULT",
        at("clock_ids_sm", "app_default"),
    ),
    "clock_limits.sm_customer_boost_max_mhz": (
        "nvmlDeviceGetClock",
        "NVML_CLOCK_ID_CUSTOMER_BOOST_MAX",
        at("clock_ids_sm", "customer_boost_max"),
    ),
}
# A failure is reported as drawn: shrinking a 2-GPU profile costs minutes, and the message already
# names each wrong fact with the value it should hold.
NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)
# Calls with an older name a driver before it answers through (nvml.newest).
FALLBACK = {"nvmlDeviceGetCurrentClocksEventReasons": "nvmlDeviceGetCurrentClocksThrottleReasons"}


def wrong_fields(machine: dict, devices: list[dict], driver: str) -> list[str]:
    """Each fact that does not hold its nvml.h field, named with what it holds instead."""
    exported = set(driver_profile(driver)["symbols"])
    wrong = []
    for gpu, device in zip(machine["gpus"], devices, strict=True):
        for fact, (call, field, expected) in FIELDS.items():
            found = get(device, tuple(fact.split(".")))
            exports = call in exported or FALLBACK.get(call) in exported
            refused = gpu.get("answers", {}).get(call) or not exports
            want = None if refused else expected(gpu)
            if want is None:  # not answered: the fact must say so, not hold another number
                if found is not None and not is_error(found) and not _parent_refused(device, fact):
                    wrong.append(
                        f"GPU {device['index']} {fact}: {call} did not answer, found {found!r}"
                    )
            elif found != want:
                wrong.append(
                    f"GPU {device['index']} {fact}: {call} {field} is {want!r}, found {found!r}"
                )
    return wrong


def _parent_refused(device: dict, fact: str) -> bool:
    parent = get(device, tuple(fact.split(".")[:-1])) if "." in fact else None
    return is_error(parent)


def probe(machine: dict, driver: str) -> list[dict]:
    with simulated_nvml(machine, driver) as lib:
        _, devices = probe_nvidia()
    assert not lib.crashes, lib.crashes
    return devices


def machines() -> list:
    return [pytest.param(m, id=m) for m in MACHINES]


@pytest.mark.parametrize("driver", DRIVERS)
@settings(
    max_examples=2, deadline=None, phases=NO_SHRINK, suppress_health_check=[HealthCheck.too_slow]
)
@given(data=st.data())
def test_every_nvml_fact_holds_the_field_it_names(driver, data):
    machine = data.draw(st.sampled_from(MACHINES).flatmap(distinct_machine), label="machine")
    assert not wrong_fields(machine, probe(machine, driver), driver)


@pytest.mark.parametrize("name", MACHINES)
def test_each_machine_round_trips_with_distinct_values(name):
    """Every profile at least once (the test above draws them), under the newest driver."""

    @settings(max_examples=1, deadline=None, phases=NO_SHRINK, database=None)
    @given(machine=distinct_machine(name))
    def round_trip(machine):
        assert not wrong_fields(machine, probe(machine, "R580"), "R580")

    round_trip()


# --- the round trip tells a swapped pair apart --------------------------------------------
SWAPS = [
    (nvml_probe, "_ecc_errors", "volatile_corrected", "volatile_uncorrected"),
    (nvml_probe, "_remapped_rows", "correctable", "uncorrectable"),
    (nvml_probe, "_pcie", "width_current", "width_max"),
    (nvml_probe, "_pcie", "gen_current", "gen_max"),
    (nvml_probe, "_clocks", "sm_mhz", "sm_max_mhz"),
    (nvml_probe, "_power", "limit_w", "default_limit_w"),
    (counters, "_ecc_by_location", "dram_corrected_aggregate", "dram_uncorrected_aggregate"),
    (counters, "_applications_clocks", "sm_mhz", "default_sm_mhz"),
    (counters, "_temperature_thresholds", "slowdown_c", "shutdown_c"),
]


@pytest.mark.parametrize(
    ("module", "function", "a", "b"), SWAPS, ids=[f"{s[1]}:{s[2]}-{s[3]}" for s in SWAPS]
)
def test_a_swapped_pair_fails_the_round_trip(module, function, a, b, monkeypatch):
    monkeypatch.setattr(module, function, swapped(module, function, a, b))

    @settings(max_examples=1, deadline=None, phases=NO_SHRINK, database=None)
    @given(machine=distinct_machine("h100_hgx"))
    def round_trip(machine):
        wrong = wrong_fields(machine, probe(machine, "R580"), "R580")
        named = {line.split(":")[0].split(" ", 2)[2] for line in wrong}
        assert {fact.rsplit(".", 1)[-1] for fact in named} == {a, b}, wrong

    round_trip()


def test_the_same_swap_passes_on_the_captured_profile(monkeypatch):
    """Why distinct values: on a healthy capture the pair is equal and the swap is unseen."""
    monkeypatch.setattr(
        nvml_probe, "_pcie", swapped(nvml_probe, "_pcie", "width_current", "width_max")
    )
    from rigcheck.testing.nvml_sim import machine_profile

    machine = machine_profile("h100_hgx")
    assert not wrong_fields(machine, probe(machine, "R580"), "R580")
    assert "pcie.width_current = pcie.width_max = 16" in equal_pairs(machine["gpus"][0], SWAPPABLE)


# Pairs no simulated board answers both of: Volta and older retire pages, and no profile of
# one exists (every profile answers nvmlDeviceGetRetiredPages NOT_SUPPORTED, as Ampere does).
NEVER_ANSWERED = {(("retired_pages", "single_bit"), ("retired_pages", "double_bit"))}


def test_every_swappable_pair_differs_in_some_distinct_profile():
    """The checker over the fixture profiles: a pair of fields a probe could confuse that every
    captured profile leaves equal must differ once the distinct mode fills it, or the round
    trip could not see it swapped."""
    from rigcheck.testing.nvml_sim import machine_profile

    still_equal = set(SWAPPABLE)
    for name in MACHINES:
        captured = machine_profile(name)["gpus"][0]
        drawn = numbered_machine(name, gpus=1)["gpus"][0]
        still_equal -= {p for p in SWAPPABLE if not _equal_or_absent(captured, p)}
        still_equal -= {p for p in SWAPPABLE if not _equal_or_absent(drawn, p)}
    assert still_equal == NEVER_ANSWERED


def _equal_or_absent(gpu: dict, pair) -> bool:
    a, b = (get(gpu, p) for p in pair)
    return a is None or b is None or bool(equal_pairs(gpu, [pair]))


def test_the_checker_names_the_pairs_a_captured_profile_leaves_equal():
    from rigcheck.testing.nvml_sim import machine_profile

    flagged = equal_pairs(machine_profile("h100_hgx")["gpus"][0], SWAPPABLE)
    assert (
        "ecc_errors.dram_corrected_volatile = ecc_errors.dram_uncorrected_volatile = 0" in flagged
    )
    assert "power.enforced_limit_mw = power.default_limit_mw = 700000" in flagged
