"""Health limits from a class's spec (expected/<class>.json "health_limits"), read fail-closed,
and the guards the counter checks share."""

from __future__ import annotations

from typing import Any

import pytest

from rigcheck.facts import Facts
from rigcheck.require import fact
from rigcheck.spec import Spec


def health_limit(spec: Spec, key: str) -> float:
    """A ceiling or floor from the spec; a class without it fails the check, never passes it."""
    entry = spec.data.get("health_limits", {}).get(key)
    value = entry.get("value") if isinstance(entry, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        pytest.fail(
            f"cannot check: expected/{spec.name}.json has no health_limits.{key} (a number with "
            "its unit and source): add it, as the other class files have it",
            pytrace=False,
        )
    return value


# NVML checks with no amdsmi counterpart probed yet: on AMD each xfails saying exactly what
# rigcheck would have to read, and how to look by hand meanwhile.
AMD_NOT_READ = {
    "test_no_throttle_at_idle": "AMD throttling at idle is not read yet: it needs "
    "amdsmi_get_gpu_metrics_info's throttle_status / indep_throttle_status bits; look with "
    "`amd-smi metric --throttle`",
    "test_applications_clocks_at_default": "AMD clock limits set by hand are not read yet: "
    "they need amdsmi_get_clk_freq's selected SCLK/MCLK levels against the supported ones "
    "(`amd-smi set --clk-limit` lowers them); look with `amd-smi metric --clock`",
    "test_boost_clock_ceiling_at_board_max": "the AMD SCLK ceiling is not read yet: it needs "
    "amdsmi_get_clock_info's max_clk against the board's top DPM level; look with "
    "`amd-smi static --clock`",
    "test_ecc_stays_on_after_reboot": "the AMD ECC state after the next reboot is not read "
    "yet: it is the amdgpu.ras_enable module option (/etc/modprobe.d, the kernel command line); "
    "test_amd_ecc_enabled judges the state in force",
    "test_memory_in_use_is_listed": "AMD VRAM in use is not read yet: it needs "
    "amdsmi_get_gpu_memory_usage(VRAM) beside the process list's vram_mem (test_no_other_processes "
    "judges the list); look with `amd-smi monitor --vram`",
    "test_mig_state": "MI300X's counterpart of MIG, compute and memory partitioning (SPX/CPX, "
    "NPS1/NPS4: amdsmi_get_gpu_compute_partition, amdsmi_get_gpu_memory_partition), is not "
    "read yet; look with `amd-smi static --partition`",
    "test_mig_mode_after_reset": "MI300X's pending partition mode (the counterpart of MIG "
    "pending) is not read yet; look with `amd-smi static --partition`",
}
# NVIDIA-only settings with nothing to judge on AMD.
AMD_NOT_APPLICABLE = {
    "test_persistence_mode": "persistence mode is NVIDIA's (it keeps the driver initialised "
    "with no client); amdgpu keeps the GPU initialised while its kernel module is loaded",
}


def nvidia_only(spec: Spec, what: str, test: str | None = None) -> None:
    """Facts only NVML reads: on AMD a skip where nothing applies, else an xfail naming what is
    not read yet (AMD_NOT_READ); other vendors skip."""
    if spec.vendor == "amd" and test in AMD_NOT_APPLICABLE:
        pytest.skip(AMD_NOT_APPLICABLE[test])
    if spec.vendor == "amd":
        pytest.xfail(AMD_NOT_READ.get(test, f"AMD {what} are not probed yet: needs amdsmi"))
    if spec.vendor != "nvidia":
        pytest.skip(f"{what}: only NVIDIA classes report them; {spec.name} is {spec.vendor}")


# NVML checks and the amdsmi check (its file in suites/facts/ and its name) that judges the
# same thing on AMD.
AMD_EQUIVALENT = {
    "test_ecc_enabled": "test_amd_health.py::test_amd_ecc_enabled",
    "test_no_uncorrected_ecc_errors": "test_amd_health.py::test_amd_no_uncorrectable_ecc_errors",
    "test_ecc_counts_within_ceilings": "test_amd_health.py::test_amd_corrected_ecc_within_ceiling",
    "test_no_pending_memory_repair": "test_amd_health.py::test_amd_bad_pages",
    "test_remapped_rows_below_ceiling": "test_amd_health.py::test_amd_bad_pages",
    "test_retired_pages_below_limit": "test_amd_health.py::test_amd_bad_pages",
    "test_power_limit_not_capped": "test_amd_health.py::test_amd_power_cap_not_capped",
    "test_pcie_generation": "test_amd_health.py::test_amd_pcie_generation",
    "test_pcie_width": "test_amd_health.py::test_amd_pcie_width",
    "test_pcie_replays_within_limit": "test_amd_health.py::test_amd_pcie_replays_within_limit",
    "test_nvlink_up": "test_amd_health.py::test_amd_xgmi_links_up",
    "test_nvlink_error_counters": "test_amd_health.py::test_amd_xgmi_links_up",
    "test_nvswitch_fabric_registered": "test_amd_health.py::test_amd_xgmi_links_up",
    "test_firmware_identical_across_gpus": (
        "test_amd_health.py::test_amd_firmware_identical_across_gpus"
    ),
    "test_idle_temperature_below_slowdown": (
        "test_amd_idle.py::test_amd_idle_temperature_below_slowdown"
    ),
}


# NVML-suite checks whose facts AMD devices carry too (sysfs AER): they judge AMD as they are.
# amdsmi_get_gpu_process_list is stored as NVML's "processes" (amd_smi._processes).
# facts/amd/topology.py writes NVML's topology shape (gpus with index, pairs with gpus).
AMD_JUDGED_AS_IS = {
    "test_pcie_aer_within_limits",
    "test_no_other_processes",
    "test_topology_lists_every_gpu",
}


def nvidia_counters(spec: Spec, what: str, test: str) -> None:
    """An NVML health check: on AMD, a skip naming the amdsmi check that judges the same
    thing, or an xfail where AMD's counterpart is not probed yet."""
    if spec.vendor == "amd" and test in AMD_JUDGED_AS_IS:
        return
    if spec.vendor == "amd" and test in AMD_EQUIVALENT:
        pytest.skip(
            f"NVML's check: on AMD, suites/facts/{AMD_EQUIVALENT[test]} judges this through amdsmi"
        )
    nvidia_only(spec, what, test)


def newer_fact(facts: Facts, path: str) -> Any:
    """A fact rigcheck added with the counter probes (issue 12), read through the typed accessor;
    a snapshot recorded before them cannot have it: that replay skips, saying so."""
    section = path.split(".")[0]
    if facts.origin.get("kind") == "recorded" and section not in facts.data:
        version = facts.origin.get("rigcheck_version", "?")
        pytest.skip(
            f"{section} is not in this recording (rigcheck {version} did not probe it yet): "
            "record the machine again with `rigcheck facts -o FILE` to judge it"
        )
    return fact(facts, path)


def replay_interval_s(facts: Facts) -> float:
    """The longest the PCIe replay counters can have counted: the host's uptime.

    From rigcheck/facts/host/uptime.py; a snapshot recorded before that probe (and the synthetic
    ones) has it in the kernel-log record. Unknown fails the check: no rate, no verdict.
    """
    log = facts.data.get("kernel_log")
    if "uptime" not in facts.data and isinstance(log, dict) and "uptime_s" in log:
        return fact(facts, "kernel_log.uptime_s")
    return fact(facts, "uptime.since_boot_s")
