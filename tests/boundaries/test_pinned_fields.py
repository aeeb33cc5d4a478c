"""Each device fact a check reads, pinned: that field alone bad on one GPU of four fails the
check naming that GPU and no other; its neighbour field bad (the field a slip of the pen would
read instead: current for max, pending for current, a sibling counter) leaves the check quiet.

These pin the decision, not the code: they were written against the realistic mutants of
tests/mutation/realistic/ (facts.toml, counters.toml), which read the neighbour field, store one
counter under its sibling's name or turn `or` into `and`, and which the limit sweeps of
test_fact_checks.py did not notice. Checks are called directly on synthetic snapshots
(tests/check_calls.py): microseconds each, so a mutation run affords them.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from check_calls import call

from rigcheck.facts import Facts
from rigcheck.spec import Spec, load_spec
from rigcheck.testing.synthetic import synthetic_snapshot

health = importlib.import_module("suites.facts.test_health")
counters = importlib.import_module("suites.facts.test_counters")

BAD_GPU = 2  # of four: neither the first nor the last, so a loop that stops early is seen


def limit(spec: Spec, key: str) -> float:
    return spec.data["health_limits"][key]["value"]


@dataclass(frozen=True)
class Field:
    check: Callable
    field: str  # the device fact the check judges, dotted ("pcie.width_current")
    bad: Callable[[Spec], Any]  # a value of it the check must fail on
    neighbour: str | None  # the field next to it, which this check must not judge
    neighbour_bad: Callable[[Spec], Any] | None = None
    cls: str = "h100"  # a class where the check applies
    gpus_arg: bool = False  # the check also takes expected_gpus

    @property
    def id(self) -> str:
        return f"{self.check.__name__}[{self.field}]"


def _const(value: Any) -> Callable[[Spec], Any]:
    return lambda spec: value


FIELDS = [
    Field(health.test_ecc_enabled, "ecc.current", _const(False), "ecc.pending", _const(False)),
    Field(health.test_no_uncorrected_ecc_errors, "ecc_errors.volatile_uncorrected", _const(1),
          "ecc_errors.volatile_corrected", _const(10**6)),
    Field(health.test_pcie_width, "pcie.width_max", _const(8), "pcie.width_current", _const(8)),
    Field(health.test_pcie_generation, "pcie.gen_max",
          lambda s: s.expect("pcie")["generation"] - 1, "pcie.gen_current", _const(1)),
    Field(health.test_power_limit_not_capped, "power.limit_w",
          lambda s: s.expected_value("tdp") * 0.5, "power.default_limit_w",
          lambda s: s.expected_value("tdp") * 0.5),
    Field(health.test_no_pending_memory_repair, "remapped_rows.failure", _const(True),
          "remapped_rows.correctable", _const(10**4)),
    Field(health.test_no_pending_memory_repair, "remapped_rows.pending", _const(True),
          "remapped_rows.correctable", _const(10**4)),
    Field(health.test_no_pending_memory_repair, "retired_pages.pending", _const(True),
          "retired_pages.single_bit", _const(1), cls="v100"),
    Field(health.test_nvlink_up, "nvlink.0.active", _const(False), "nvlink.0.version",
          _const(1), gpus_arg=True),
    Field(health.test_nvlink_up, "nvlink.3.active", _const(None), "nvlink.3.nvml_code",
          _const(1), gpus_arg=True),
    Field(counters.test_pcie_aer_within_limits, "pcie_aer.fatal",
          lambda s: limit(s, "pcie_aer_uncorrectable_max") + 1, "pcie_aer.correctable",
          lambda s: limit(s, "pcie_aer_uncorrectable_max") + 1),
    Field(counters.test_pcie_aer_within_limits, "pcie_aer.correctable",
          lambda s: limit(s, "pcie_aer_correctable_max") + 1, None),
    Field(counters.test_nvlink_error_counters, "nvlink_errors.0.crc_flit",
          lambda s: limit(s, "nvlink_crc_errors_max") + 1, "nvlink_errors.0.link", _const(7),
          gpus_arg=True),
    Field(counters.test_nvlink_error_counters, "nvlink_errors.1.crc_data",
          lambda s: limit(s, "nvlink_crc_errors_max") + 1, None, gpus_arg=True),
    Field(counters.test_nvlink_error_counters, "nvlink_errors.2.replay",
          lambda s: limit(s, "nvlink_replay_errors_max") + 1, None, gpus_arg=True),
    Field(counters.test_nvlink_error_counters, "nvlink_errors.3.recovery",
          lambda s: limit(s, "nvlink_recovery_errors_max") + 1, None, gpus_arg=True),
    Field(counters.test_nvswitch_fabric_registered, "fabric.status", _const(1),
          "fabric.clique_id", _const(99), gpus_arg=True),
    Field(counters.test_nvswitch_fabric_registered, "fabric.state", _const("in_progress"),
          "fabric.cluster_uuid", _const("ff" * 16), gpus_arg=True),
    Field(counters.test_nvswitch_fabric_registered, "fabric.state", _const("not_started"),
          None, gpus_arg=True),
    Field(counters.test_ecc_counts_within_ceilings, "ecc_by_location.dram_corrected_aggregate",
          lambda s: limit(s, "ecc_dram_corrected_max") + 1,
          "ecc_by_location.dram_uncorrected_aggregate", _const(10**6)),
    Field(counters.test_ecc_counts_within_ceilings, "ecc_by_location.sram_uncorrected_volatile",
          lambda s: limit(s, "ecc_sram_uncorrected_max") + 1,
          "ecc_by_location.dram_uncorrected_volatile", _const(10**6)),
    Field(counters.test_ecc_counts_within_ceilings,
          "ecc_by_location.sram_uncorrected_aggregate",
          lambda s: limit(s, "ecc_sram_uncorrected_max") + 1, None),
    Field(counters.test_remapped_rows_below_ceiling, "remapped_rows.uncorrectable",
          lambda s: limit(s, "remapped_rows_uncorrectable_max") + 1, "remapped_rows.correctable",
          lambda s: limit(s, "remapped_rows_uncorrectable_max") + 1),
    Field(counters.test_retired_pages_below_limit, "retired_pages.single_bit",
          lambda s: limit(s, "retired_pages_max"), "retired_pages.pending", _const(True),
          cls="v100"),
    Field(counters.test_retired_pages_below_limit, "retired_pages.double_bit",
          lambda s: limit(s, "retired_pages_max"), None, cls="v100"),
]  # fmt: skip


def put(device: dict, path: str, value: Any) -> None:
    """Set one dotted field of a device record ("nvlink_errors.0.crc_flit")."""
    *parents, last = path.split(".")
    node: Any = device
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        assert last in node, f"{path}: no such field in the synthetic record"
        node[last] = value


def judge(case: Field, path: str, value: Callable[[Spec], Any]) -> tuple[str, str, list[dict]]:
    spec = load_spec(case.cls)
    devices = synthetic_snapshot(spec, gpus=4)["devices"]
    put(devices[BAD_GPU], path, value(spec))
    args = (spec, devices, 4) if case.gpus_arg else (spec, devices)
    outcome, message, _ = call(case.check, *args)
    return outcome, message, devices


def label(d: dict) -> str:
    return f"GPU {d['index']} ({d['pci']['bus_id']})"


@pytest.mark.parametrize("case", FIELDS, ids=lambda c: c.id)
def test_the_field_bad_on_one_gpu_fails_naming_that_gpu_only(case):
    outcome, message, devices = judge(case, case.field, case.bad)
    assert outcome == "failed", message
    assert label(devices[BAD_GPU]) in message, message
    others = [label(d) for i, d in enumerate(devices) if i != BAD_GPU]
    assert not any(other in message for other in others), message


@pytest.mark.parametrize(
    "case", [c for c in FIELDS if c.neighbour], ids=lambda c: f"{c.id}-{c.neighbour}"
)
def test_its_neighbour_field_bad_leaves_the_check_quiet(case):
    outcome, message, _ = judge(case, case.neighbour, case.neighbour_bad)
    assert outcome == "passed", message


def test_a_healthy_node_passes_every_pinned_check():
    """The baseline the two tests above depend on: nothing is bad before a field is set."""
    for case in FIELDS:
        spec = load_spec(case.cls)
        devices = synthetic_snapshot(spec, gpus=4)["devices"]
        args = (spec, devices, 4) if case.gpus_arg else (spec, devices)
        assert call(case.check, *args)[:2] == ("passed", ""), case.id


# ---- error paths: an unreadable fact never reads as a healthy one ----


def test_an_unreadable_ecc_mode_leaves_the_uncorrected_errors_judged():
    spec = load_spec("h100")
    devices = synthetic_snapshot(spec, gpus=4)["devices"]
    devices[BAD_GPU]["ecc"] = {"error": "NVMLError_Unknown: Unknown Error"}
    devices[BAD_GPU]["ecc_errors"]["volatile_uncorrected"] = 2
    outcome, message, _ = call(health.test_no_uncorrected_ecc_errors, spec, devices)
    assert outcome == "failed" and label(devices[BAD_GPU]) in message, message


def test_throttle_reasons_that_could_not_be_read_fail_closed_naming_the_gpu():
    spec = load_spec("h100")
    devices = synthetic_snapshot(spec, gpus=4)["devices"]
    devices[BAD_GPU]["throttle_reasons"] = {"error": "NVMLError_GpuIsLost: GPU is lost"}
    outcome, message, _ = call(health.test_no_throttle_at_idle, spec, devices)
    assert outcome == "failed" and label(devices[BAD_GPU]) in message, message
    assert "GPU is lost" in message


def test_a100_is_judged_by_row_remapping_and_fails_closed_without_it():
    """Compute capability 8.0 is where row remapping begins (A100 GPU Memory Error Management):
    an A100 whose remapped rows NVML does not report cannot be judged."""
    spec = load_spec("a100")
    assert health.memory_repair(spec) == "remapped_rows"
    devices = synthetic_snapshot(spec, gpus=4)["devices"]
    devices[BAD_GPU]["remapped_rows"] = None
    outcome, message, _ = call(health.test_no_pending_memory_repair, spec, devices)
    assert outcome == "failed" and label(devices[BAD_GPU]) in message, message


def test_a_recorded_snapshot_excuses_no_process_by_pid():
    """Only a live run's own pid is ours; in a replay every listed process holds the GPU."""
    spec = load_spec("h100")
    data = synthetic_snapshot(spec, gpus=4)
    data["origin"]["kind"] = "recorded"
    devices = data["devices"]
    devices[BAD_GPU]["processes"] = [{"pid": os.getpid(), "used_bytes": 2**30}]
    outcome, message, _ = call(health.test_no_other_processes, Facts(data), spec, devices)
    assert outcome == "failed" and label(devices[BAD_GPU]) in message, message


# Checks that skip a GPU whose fact is None (NVML's NotSupported: the GPU does not keep it) must
# not skip one whose read failed: an error record fails the check naming the GPU.
SKIPS_NONE = [
    (counters.test_remapped_rows_below_ceiling, "remapped_rows", "h100", False),
    (counters.test_retired_pages_below_limit, "retired_pages", "v100", False),
    (counters.test_ecc_counts_within_ceilings, "ecc_by_location", "h100", False),
    (counters.test_nvswitch_fabric_registered, "fabric", "h100", True),
]


@pytest.mark.parametrize(
    ("check", "key", "cls", "gpus_arg"), SKIPS_NONE, ids=[s[1] for s in SKIPS_NONE]
)
def test_a_fact_that_could_not_be_read_is_not_skipped_as_not_supported(check, key, cls, gpus_arg):
    spec = load_spec(cls)
    devices = synthetic_snapshot(spec, gpus=4)["devices"]
    devices[BAD_GPU][key] = {"error": "NVMLError_Unknown: Unknown Error"}
    args = (spec, devices, 4) if gpus_arg else (spec, devices)
    outcome, message, _ = call(check, *args)
    assert outcome == "failed" and label(devices[BAD_GPU]) in message, message
    assert "Unknown Error" in message, message
