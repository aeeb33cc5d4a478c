"""The AMD health checks' facts pinned field by field, and amdsmi's enum tables entry by entry.

As tests/boundaries/test_pinned_fields.py for NVIDIA: one field bad on one MI300X of four fails
its check naming that GPU only; the neighbour field bad leaves the check quiet. Written against
the realistic mutants of tests/mutation/realistic/amd.toml (a RAS block read from its neighbour,
deferred errors dropped, a missing UMC block taken as enabled, xGMI errors filed as none).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from amd_real import DRIVER_NOT_LOADED, NO_PERM, real_amdsmi
from check_calls import call
from test_pinned_fields import BAD_GPU, put

from rigcheck.facts import Facts
from rigcheck.facts.amd import smi as amd_smi
from rigcheck.facts.probe import is_error
from rigcheck.spec import load_spec
from rigcheck.testing.synthetic import synthetic_snapshot

amd_health = importlib.import_module("suites.facts.test_amd_health")
MI300X = load_spec("mi300x")


def limit(key: str) -> float:
    return MI300X.data["health_limits"][key]["value"]


def ras_block(name: str, field: str) -> str:
    """The dotted path of one RAS block's field in the synthetic record."""
    blocks = synthetic_snapshot(MI300X, gpus=1)["devices"][0]["ras_blocks"]
    index = next(i for i, b in enumerate(blocks) if b["block"] == name)
    return f"ras_blocks.{index}.{field}"


@dataclass(frozen=True)
class Field:
    check: Callable
    field: str
    bad: Any
    neighbour: str | None
    neighbour_bad: Any = None
    gpus_arg: bool = False
    facts_arg: bool = False  # the check also reads the node's facts (uptime for a rate)

    @property
    def id(self) -> str:
        return f"{self.check.__name__}[{self.field}]"


THRESHOLD = 128  # the synthetic bad-page threshold (rigcheck/testing/synthetic_amd.py)
FIELDS = [
    Field(amd_health.test_amd_ecc_enabled, ras_block("UMC", "state"), "DISABLED",
          ras_block("GFX", "state"), "DISABLED"),
    Field(amd_health.test_amd_no_uncorrectable_ecc_errors, "ras.uncorrectable",
          limit("amd_ecc_uncorrectable_max") + 1, "ras.correctable",
          limit("amd_ecc_uncorrectable_max") + 1),
    Field(amd_health.test_amd_no_uncorrectable_ecc_errors, "ras.deferred",
          limit("amd_ecc_uncorrectable_max") + 1, None),
    Field(amd_health.test_amd_corrected_ecc_within_ceiling, "ras.correctable",
          limit("amd_ecc_correctable_max") + 1, "ras.deferred",
          limit("amd_ecc_correctable_max") + 1),
    Field(amd_health.test_amd_bad_pages, "bad_pages.pending", 1, None),
    Field(amd_health.test_amd_bad_pages, "bad_pages.unreservable", 1, None),
    Field(amd_health.test_amd_bad_pages, "bad_pages.retired",
          int(limit("amd_bad_pages_threshold_fraction_max") * THRESHOLD) + 1, None),
    Field(amd_health.test_amd_power_cap_not_capped, "power_cap.cap_w", 100.0,
          "power_cap.default_w", 100.0),
    Field(amd_health.test_amd_pcie_width, "pcie_link.width_current", 8, "pcie_link.width_max", 8),
    Field(amd_health.test_amd_pcie_generation, "pcie_link.gen_max", 4, "pcie_link.gen_current",
          1),
    Field(amd_health.test_amd_pcie_replays_within_limit, "pcie_link.replays",
          limit("pcie_replays_max") + 1, "pcie_link.nak_sent", limit("pcie_replays_max") + 1,
          facts_arg=True),
    Field(amd_health.test_amd_xgmi_links_up, "xgmi.up", 6, "xgmi.total_links", 8,
          gpus_arg=True),
    Field(amd_health.test_amd_xgmi_links_up, "xgmi.error_status", "error", None, gpus_arg=True),
    Field(amd_health.test_amd_xgmi_links_up, "xgmi.error_status", "multiple_errors", None,
          gpus_arg=True),
    Field(amd_health.test_amd_xgmi_links_up, "xgmi.error_status", "unknown_7", None,
          gpus_arg=True),
]  # fmt: skip


# A minute after boot: a replay count above the allowance is then also above every link's
# rate (the replay check judges a rate since boot, rigcheck/replay_rate.py).
UPTIME_S = 60.0


def judge(case: Field, path: str, value: Any) -> tuple[str, str, list[dict]]:
    snapshot = synthetic_snapshot(MI300X, gpus=4)
    snapshot["kernel_log"]["uptime_s"] = UPTIME_S
    devices = snapshot["devices"]
    put(devices[BAD_GPU], path, value)
    args = (MI300X, devices, 4) if case.gpus_arg else (MI300X, devices)
    if case.facts_arg:
        args = (*args, Facts(snapshot))
    outcome, message, _ = call(case.check, *args)
    return outcome, message, devices


def label(d: dict) -> str:
    return f"GPU {d['index']} ({d['pci']['bus_id']})"


@pytest.mark.parametrize("case", FIELDS, ids=lambda c: c.id)
def test_the_field_bad_on_one_gpu_fails_naming_that_gpu_only(case):
    outcome, message, devices = judge(case, case.field, case.bad)
    assert outcome == "failed", message
    assert label(devices[BAD_GPU]) in message, message
    assert not any(label(d) in message for i, d in enumerate(devices) if i != BAD_GPU), message


@pytest.mark.parametrize(
    "case", [c for c in FIELDS if c.neighbour], ids=lambda c: f"{c.id}-{c.neighbour}"
)
def test_its_neighbour_field_bad_leaves_the_check_quiet(case):
    outcome, message, _ = judge(case, case.neighbour, case.neighbour_bad)
    assert outcome == "passed", message


def test_a_gpu_listing_no_umc_block_is_not_taken_for_ecc_on():
    devices = synthetic_snapshot(MI300X, gpus=4)["devices"]
    blocks = devices[BAD_GPU]["ras_blocks"]
    devices[BAD_GPU]["ras_blocks"] = [b for b in blocks if b["block"] != "UMC"]
    outcome, message, _ = call(amd_health.test_amd_ecc_enabled, MI300X, devices)
    assert outcome == "failed" and label(devices[BAD_GPU]) in message, message
    assert "not listed" in message


def test_unreservable_pages_count_toward_the_threshold():
    """retired + unreservable at the threshold fraction: neither alone reaches it."""
    devices = synthetic_snapshot(MI300X, gpus=4)["devices"]
    at = int(limit("amd_bad_pages_threshold_fraction_max") * THRESHOLD + 0.999)
    devices[BAD_GPU]["bad_pages"].update(retired=at - 1, unreservable=1)
    outcome, message, _ = call(amd_health.test_amd_bad_pages, MI300X, devices)
    assert outcome == "failed", message
    assert f"{at} of {THRESHOLD} pages retired" in message, message


# ---- amdsmi's enums, entry by entry ----
# Source: ROCm amdsmi, include/amd_smi/amdsmi.h: amdsmi_memory_page_status_t
# (AMDSMI_MEM_PAGE_STATUS_RESERVED = 0, _PENDING, _UNRESERVABLE) and amdsmi_xgmi_status_t
# (AMDSMI_XGMI_STATUS_NO_ERRORS = 0, _ERROR, _MULTIPLE_ERRORS); amdsmi_interface.py's
# AmdSmiMemoryPageStatus and AmdSmiXgmiStatus carry the same values. RESERVED is a page the
# driver has retired (reserved away from use).
AMDSMI_PAGE_STATUS = {"RESERVED": 0, "PENDING": 1, "UNRESERVABLE": 2}
AMDSMI_XGMI_STATUS = {"NO_ERRORS": 0, "ERROR": 1, "MULTIPLE_ERRORS": 2}
PAGE_NAMES = {"RESERVED": "retired", "PENDING": "pending", "UNRESERVABLE": "unreservable"}
XGMI_FAILS = {"NO_ERRORS": False, "ERROR": True, "MULTIPLE_ERRORS": True}


@pytest.mark.parametrize("name", AMDSMI_PAGE_STATUS)
def test_each_bad_page_status_is_stored_under_its_own_name(name):
    assert amd_smi.PAGE_STATUS[AMDSMI_PAGE_STATUS[name]] == PAGE_NAMES[name]


@pytest.mark.parametrize("name", AMDSMI_XGMI_STATUS)
def test_each_xgmi_status_is_stored_and_judged_as_amdsmi_means_it(name):
    stored = amd_smi.XGMI_ERROR[AMDSMI_XGMI_STATUS[name]]
    devices = synthetic_snapshot(MI300X, gpus=4)["devices"]
    devices[BAD_GPU]["xgmi"]["error_status"] = stored
    outcome, message, _ = call(amd_health.test_amd_xgmi_links_up, MI300X, devices, 4)
    assert (outcome == "failed") is XGMI_FAILS[name], (stored, message)


def test_an_xgmi_status_amdsmi_does_not_define_fails_closed():
    assert amd_smi.XGMI_ERROR.get(3) is None  # stored as unknown_3, and judged a fault


# ---- the probe: each counter read from its own amdsmi field ----


def probe_one(device: dict[str, Any], failures: dict | None = None) -> dict[str, Any]:
    """One device through the real amdsmi package over rigcheck/testing/amdsmi_sim; `failures`:
    (C symbol, bus id or None) -> the amdsmi_status_t code that call answers."""
    module = real_amdsmi([device])
    module.failures.update(failures or {})
    module.amdsmi_init()  # the real library refuses every call before init (NOT_INIT)
    try:
        return amd_smi.probe_device(module, module.amdsmi_get_processor_handles()[0],
                                    amd_smi._reader(module))  # fmt: skip
    finally:
        module.amdsmi_shut_down()


def test_pcie_counters_are_read_each_from_its_own_field():
    device = synthetic_snapshot(MI300X, gpus=1)["devices"][0]
    device["pcie_link"].update(replays=11, recoveries=22, nak_sent=33, nak_received=44)
    link = probe_one(device)["pcie_link"]
    assert (link["replays"], link["recoveries"], link["nak_sent"], link["nak_received"]) == (
        11, 22, 33, 44,
    )  # fmt: skip


@pytest.mark.parametrize("stored", ["error", "multiple_errors"])
def test_an_xgmi_error_status_reads_back_as_amdsmi_reported_it(stored):
    device = synthetic_snapshot(MI300X, gpus=2)["devices"][0]
    device["xgmi"]["error_status"] = stored
    assert probe_one(device)["xgmi"]["error_status"] == stored


# amdsmi_interface.py's amdsmi_get_gpu_xgmi_link_status writes each link of
# amdsmi_xgmi_link_status_type_t (amdsmi.h: AMDSMI_XGMI_LINK_DOWN, _UP, _DISABLE) as a letter:
# "D", "U", "X".
AMDSMI_LINK_LETTERS = {"U": "up", "D": "down", "X": "disabled"}


def test_each_xgmi_link_letter_is_counted_under_its_own_name():
    assert amd_smi.XGMI_LINK == AMDSMI_LINK_LETTERS


def test_xgmi_links_down_or_disabled_read_back_and_fail_the_gpu():
    devices = synthetic_snapshot(MI300X, gpus=4)["devices"]
    devices[BAD_GPU]["xgmi"].update(up=5, down=1, disabled=1)
    assert probe_one(devices[BAD_GPU])["xgmi"] == devices[BAD_GPU]["xgmi"]
    outcome, message, _ = call(amd_health.test_amd_xgmi_links_up, MI300X, devices, 4)
    assert outcome == "failed" and f"{label(devices[BAD_GPU])}: 5/7 xGMI links up" in message


# ---- a library error, raised as the real AmdSmiLibraryException, followed to the verdict ----
# (C call refused, the fact it fills, the check that judges that fact)
REFUSED = [
    ("amdsmi_get_gpu_bad_page_info", "bad_pages", amd_health.test_amd_bad_pages),
    ("amdsmi_get_gpu_ras_block_features_enabled", "ras_blocks", amd_health.test_amd_ecc_enabled),
]


@pytest.mark.parametrize("status", [NO_PERM, DRIVER_NOT_LOADED], ids=["NO_PERM", "NOT_LOADED"])
@pytest.mark.parametrize(("symbol", "key", "check"), REFUSED, ids=[r[1] for r in REFUSED])
def test_a_library_error_on_one_gpu_fails_its_check_naming_that_gpu(status, symbol, key, check):
    """Never stored as "not supported" or "none counted": an error record, and the check fails
    closed on that GPU only."""
    devices = synthetic_snapshot(MI300X, gpus=4)["devices"]
    probed = probe_one(devices[BAD_GPU], {(symbol, None): status})[key]
    assert is_error(probed), probed
    devices[BAD_GPU][key] = probed
    outcome, message, _ = call(check, MI300X, devices)
    assert outcome == "failed", message
    assert label(devices[BAD_GPU]) in message, message
    assert not any(label(d) in message for i, d in enumerate(devices) if i != BAD_GPU), message
