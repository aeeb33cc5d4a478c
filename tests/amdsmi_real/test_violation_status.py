"""amdsmi_get_violation_status through each real amdsmi release over the simulated libamd_smi:
what the AMD probe reads (ROCm 6.3 on; None before, where the package has no such function) and
what test_amd_no_violation_at_idle makes of it. The gap the coverage campaign found: an MI300X
held down by a power or thermal limit at idle passed every check (issue 40)."""

from __future__ import annotations

import importlib

import pytest
from amd_real import RELEASES, healthy_node, probe
from check_calls import call

from rigcheck.spec import load_spec
from rigcheck.testing.amdsmi_sim import release_of

amd_idle = importlib.import_module("suites.facts.test_amd_idle")
KINDS = ("prochot", "ppt_power", "socket_thermal", "vr_thermal", "hbm_thermal")


def idle_record() -> dict:
    return {"active": dict.fromkeys(KINDS, False), "percent": dict.fromkeys(KINDS, 0)}


def node_with(record: dict | None, on: int | None = None, kind: str = "ppt_power") -> dict:
    """The synthetic MI300X node, each GPU answering `record`; GPU `on` held down by `kind`."""
    node = healthy_node()
    for i, device in enumerate(node["devices"]):
        copied = None if record is None else {k: dict(v) for k, v in record.items()}
        device["amd_violation"] = copied
        if i == on:
            device["amd_violation"]["active"][kind] = True
            device["amd_violation"]["percent"][kind] = 100
    return node


@pytest.mark.parametrize("release", RELEASES)
def test_every_release_reads_the_violation_status_it_has(release, monkeypatch, tmp_path):
    node = node_with(idle_record(), on=3)
    devices, _ = probe(node, release, monkeypatch, tmp_path)
    if release_of(release) < (6, 3):  # no amdsmi_get_violation_status in the package
        assert [d["amd_violation"] for d in devices] == [None] * 8
        return
    assert [d["amd_violation"] for d in devices] == [d["amd_violation"] for d in node["devices"]]


@pytest.mark.parametrize("release", RELEASES)
def test_a_kind_the_gpu_does_not_report_reads_as_none(release, monkeypatch, tmp_path):
    record = idle_record()
    record["active"]["hbm_thermal"] = record["percent"]["hbm_thermal"] = None  # all ones: N/A
    devices, _ = probe(node_with(record), release, monkeypatch, tmp_path)
    if release_of(release) >= (6, 3):
        assert devices[0]["amd_violation"] == record


def judged(devices: list[dict]) -> tuple[str, str]:
    return call(amd_idle.test_amd_no_violation_at_idle, devices)[:2]


def test_the_check_fails_a_gpu_held_down_at_idle_and_passes_an_idle_one():
    spec = load_spec("mi300x")
    assert spec.vendor == "amd"
    healthy = node_with(idle_record())["devices"]
    assert judged(healthy) == ("passed", "")
    held = node_with(idle_record(), on=2, kind="prochot")["devices"]
    outcome, message = judged(held)
    assert outcome == "failed"
    assert (
        message.startswith("GPUs held down at idle by a power or thermal limit: GPU 2 (")
        and "prochot (processor hot asserted" in message
        and "100%)" in message
    )


def test_a_recent_share_without_an_active_flag_is_not_judged():
    """The percentages cover recent time (the last job's load may still show): never judged."""
    record = idle_record()
    record["percent"]["ppt_power"] = 40
    assert judged(node_with(record)["devices"]) == ("passed", "")


def test_no_gpu_reporting_it_is_not_judged_and_an_unreadable_one_fails():
    outcome, message = judged(node_with(None)["devices"])
    assert outcome == "skipped" and "ROCm 6.3 or later" in message
    devices = node_with(idle_record())["devices"]
    devices[1]["amd_violation"] = {"error": "AmdSmiLibraryException: NO_PERM"}
    assert judged(devices)[0] == "failed"
