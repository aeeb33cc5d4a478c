"""The epilog's judgement of what a job left, on the synthetic h100 snapshot (fixtures/snapshots,
healthy) and copies changed as fixtures/broken_variants.json changes them."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from rigcheck.gate.epilog import Finding, leftovers, root_cause_line

H100 = json.loads(
    (Path(__file__).resolve().parents[2] / "fixtures" / "snapshots" / "h100.json").read_text()
)
XID_79 = {"t_s": 3600.5, "bus_id": "0000:18:00.0", "code": 79, "pid": None,
          "text": "GPU has fallen off the bus."}  # fmt: skip


def changed(**device_changes) -> dict:
    facts = copy.deepcopy(H100)
    facts["devices"][0].update(device_changes)
    return facts


def keys(found: list[Finding]) -> list[str]:
    return [f.key for f in found]


def test_a_clean_job_leaves_nothing():
    assert leftovers(H100, copy.deepcopy(H100)) == []
    assert root_cause_line([]) is None


def test_a_new_xid_is_found_and_an_old_one_is_not():
    after = copy.deepcopy(H100)
    after["kernel_log"].update(xid_events=[XID_79], xid_count=1)
    found = leftovers(H100, after)
    assert root_cause_line(found) == (
        "job_left_xid: 1 new Xid event(s) (Xid 79), first on 0000:18:00.0"
    )
    assert leftovers(after, copy.deepcopy(after)) == []  # there before the job: not its doing


def test_xid_events_past_the_kept_list_are_still_counted():
    before, after = copy.deepcopy(H100), copy.deepcopy(H100)
    before["kernel_log"].update(xid_events=[XID_79], xid_count=40)
    after["kernel_log"].update(xid_events=[XID_79], xid_count=42)
    assert [f.line for f in leftovers(before, after)] == [
        "job_left_xid: 2 new Xid event(s) in the kernel log"
    ]


@pytest.mark.parametrize("counter", ["volatile_uncorrected", "aggregate_uncorrected"])
def test_uncorrected_ecc_errors_that_grew_are_found(counter):
    errors = {**H100["devices"][0]["ecc_errors"], counter: 2}
    found = leftovers(H100, changed(ecc_errors=errors))
    assert [f.line for f in found] == [f"job_left_ecc: GPU 0: {counter} ECC errors grew by 2"]


def test_corrected_ecc_errors_are_not_a_fault():
    errors = {**H100["devices"][0]["ecc_errors"], "volatile_corrected": 5}
    assert leftovers(H100, changed(ecc_errors=errors)) == []


def test_rows_remapped_for_uncorrectable_errors_are_found():
    rows = {**H100["devices"][0]["remapped_rows"], "uncorrectable": 1}
    assert keys(leftovers(H100, changed(remapped_rows=rows))) == ["job_left_ecc"]


def test_a_slowdown_still_active_is_found_even_without_a_prolog():
    after = changed(throttle_reasons=["gpu_idle", "hw_thermal_slowdown"])
    assert [f.line for f in leftovers(None, after)] == [
        "job_left_throttle: GPU 0: hw_thermal_slowdown still active"
    ]
    assert leftovers(None, changed(throttle_reasons=["gpu_idle", "sw_power_cap"])) == []


def test_a_process_still_holding_a_gpu_is_found_unless_it_was_there_before():
    held = changed(processes=[{"pid": 48213, "used_bytes": 2147483648}])
    assert [f.line for f in leftovers(H100, held)] == [
        "job_left_process: GPU 0 still held by pid 48213 after the job"
    ]
    assert leftovers(held, copy.deepcopy(held)) == []
    assert keys(leftovers(None, held)) == ["job_left_process"]


def test_without_a_prolog_counters_are_not_judged():
    after = copy.deepcopy(H100)
    after["kernel_log"].update(xid_events=[XID_79], xid_count=1)
    assert leftovers(None, after) == []


def test_unreadable_counters_are_left_to_the_fact_checks():
    after = changed(ecc_errors={"error": "NVMLError_NotSupported"}, processes={"error": "x"},
                    throttle_reasons="[Not Supported]")  # fmt: skip
    after["kernel_log"] = {"error": "journalctl: permission denied"}
    assert leftovers(H100, after) == []


def test_several_findings_make_one_line_with_a_count():
    after = changed(throttle_reasons=["hw_slowdown"], processes=[{"pid": 7}])
    after["kernel_log"].update(xid_events=[XID_79], xid_count=1)
    line = root_cause_line(leftovers(H100, after))
    assert line.startswith("job_left_xid: ") and line.endswith(" (+2 more)")


def two_gpus(first: dict, second: dict) -> dict:
    """The snapshot with two GPUs (index 0 and 3), each changed as given."""
    facts = copy.deepcopy(H100)
    gpu = facts["devices"][0]
    facts["devices"] = [{**copy.deepcopy(gpu), **first, "index": 0},
                        {**copy.deepcopy(gpu), **second, "index": 3}]  # fmt: skip
    return facts


def ecc(**counts) -> dict:
    return {**H100["devices"][0]["ecc_errors"], **counts}


def rows(n: int) -> dict:
    return {**H100["devices"][0]["remapped_rows"], "uncorrectable": n}


def test_ecc_is_compared_per_gpu_by_index_against_the_prolog():
    before = two_gpus({"ecc_errors": ecc(volatile_uncorrected=5)}, {"ecc_errors": ecc()})
    same = two_gpus({"ecc_errors": ecc(volatile_uncorrected=5)}, {"ecc_errors": ecc()})
    same["devices"].reverse()  # the order NVML lists them in does not matter, the index does
    assert leftovers(before, same) == []
    both = ecc(volatile_uncorrected=1, aggregate_uncorrected=1)
    grew = two_gpus({"ecc_errors": ecc(volatile_uncorrected=5)}, {"ecc_errors": both})
    assert [f.line for f in leftovers(before, grew)] == [
        "job_left_ecc: GPU 3: volatile_uncorrected ECC errors grew by 1"
    ]  # one finding per GPU: the first counter that grew


def test_a_gpu_the_prolog_did_not_see_counts_from_zero():
    before = copy.deepcopy(H100)
    after = two_gpus({}, {"ecc_errors": ecc(aggregate_uncorrected=2)})
    assert [f.line for f in leftovers(before, after)] == [
        "job_left_ecc: GPU 3: aggregate_uncorrected ECC errors grew by 2"
    ]


def test_remapped_rows_are_compared_against_the_prolog():
    before = two_gpus({"remapped_rows": rows(2)}, {"remapped_rows": rows(0)})
    assert leftovers(before, two_gpus({"remapped_rows": rows(2)}, {"remapped_rows": rows(0)})) == []
    after = two_gpus({"remapped_rows": rows(2)}, {"remapped_rows": rows(1)})
    assert [f.line for f in leftovers(before, after)] == [
        "job_left_ecc: GPU 3: 1 rows remapped for uncorrectable errors"
    ]


def test_one_more_xid_past_the_kept_list_is_found():
    before, after = copy.deepcopy(H100), copy.deepcopy(H100)
    before["kernel_log"].update(xid_events=[XID_79], xid_count=40)
    after["kernel_log"].update(xid_events=[XID_79], xid_count=41)
    assert [f.line for f in leftovers(before, after)] == [
        "job_left_xid: 1 new Xid event(s) in the kernel log"
    ]


def test_new_xid_events_are_told_apart_from_old_ones_by_every_field():
    old = {**XID_79, "code": 13, "t_s": 100.0, "text": "Graphics Engine Exception"}
    no_bus = {**XID_79, "code": 48, "t_s": 300.0, "bus_id": None}
    before, after = copy.deepcopy(H100), copy.deepcopy(H100)
    before["kernel_log"].update(xid_events=[old], xid_count=1)
    after["kernel_log"].update(xid_events=[old, no_bus, XID_79], xid_count=3)
    assert [f.line for f in leftovers(before, after)] == [
        "job_left_xid: 2 new Xid event(s) (Xid 48, 79), first on a GPU"
    ]


def test_two_findings_count_one_more():
    after = changed(throttle_reasons=["hw_slowdown", "sw_thermal_slowdown"], processes=[{"pid": 7}])
    found = leftovers(H100, after)
    assert (
        found[0].line == "job_left_throttle: GPU 0: hw_slowdown, sw_thermal_slowdown still active"
    )
    assert root_cause_line(found) == found[0].line + " (+1 more)"


def test_at_most_four_pids_are_named():
    after = changed(processes=[{"pid": p} for p in (11, 12, 13, 14, 15)])
    assert [f.line for f in leftovers(H100, after)] == [
        "job_left_process: GPU 0 still held by pid 11, 12, 13, 14 after the job"
    ]


def test_missing_or_odd_counters_are_left_to_the_fact_checks():
    after = changed(ecc_errors=["x"], remapped_rows=None, processes=None, throttle_reasons=None)
    assert leftovers(H100, after) == []
    assert leftovers(None, {"devices": "unreadable"}) == []


XID_13 = {**XID_79, "code": 13, "t_s": 3601.0, "text": "Graphics Exception: ESR 0x404600"}
XID_149 = {**XID_79, "code": 149, "t_s": 3602.0, "text": "NETIR_LINK_EVT Nonfatal XC0 i0 Link 01"}


def test_a_jobs_own_xid_does_not_drain_the_node():
    # NVIDIA buckets Xid 13 RESTART_APP: the program's bug, as test_no_machine_fault_xids says.
    after = copy.deepcopy(H100)
    after["kernel_log"].update(xid_events=[XID_13, XID_149], xid_count=2)
    assert leftovers(H100, after) == []


def test_a_machine_xid_beside_a_jobs_own_is_named_alone():
    after = copy.deepcopy(H100)
    after["kernel_log"].update(xid_events=[XID_13, XID_79], xid_count=2)
    assert [f.line for f in leftovers(H100, after)] == [
        "job_left_xid: 1 new Xid event(s) (Xid 79), first on 0000:18:00.0"
    ]


def test_xids_only_counted_beside_a_jobs_own_still_drain():
    after = copy.deepcopy(H100)
    after["kernel_log"].update(xid_events=[XID_13], xid_count=3)
    assert [f.line for f in leftovers(H100, after)] == [
        "job_left_xid: 2 new Xid event(s) in the kernel log"
    ]


@pytest.mark.parametrize("code", [None, "79", True])
def test_an_xid_without_a_readable_code_is_a_fault(code):
    after = copy.deepcopy(H100)
    after["kernel_log"].update(xid_events=[{**XID_13, "code": code}], xid_count=1)
    assert keys(leftovers(H100, after)) == ["job_left_xid"]


def test_an_xid_judged_by_its_text_without_text_is_a_fault():
    after = copy.deepcopy(H100)
    after["kernel_log"].update(xid_events=[{**XID_149, "text": None}], xid_count=1)
    assert keys(leftovers(H100, after)) == ["job_left_xid"]


NVRM_OFF_BUS = {"t_s": 3605.0, "bus_id": "0000:18:00.0", "kind": "fallen_off_bus",
                "text": "NVRM: GPU 0000:18:00.0: GPU has fallen off the bus."}  # fmt: skip


def test_a_new_nvrm_record_without_an_xid_is_found_and_an_old_one_is_not():
    after = copy.deepcopy(H100)
    after["kernel_log"]["nvrm_events"] = [NVRM_OFF_BUS]
    assert [f.line for f in leftovers(H100, after)] == [
        "job_left_nvrm: 1 new NVRM record(s) (fallen_off_bus), first on 0000:18:00.0"
    ]
    assert leftovers(after, copy.deepcopy(after)) == []
    assert leftovers(None, after) == []  # without the prolog's facts: not judged, as Xids


def test_nvrm_records_name_their_kinds_and_a_gpu_when_none_is_named():
    before, after = copy.deepcopy(H100), copy.deepcopy(H100)
    before["kernel_log"]["nvrm_events"] = [NVRM_OFF_BUS]
    init = {**NVRM_OFF_BUS, "kind": "init_failed", "bus_id": None, "t_s": 3700.0}
    gsp = {**init, "kind": "gsp_init_failed", "t_s": 3701.0}
    after["kernel_log"]["nvrm_events"] = [NVRM_OFF_BUS, init, gsp, {**init, "t_s": 3702.0}]
    assert [f.line for f in leftovers(before, after)] == [
        "job_left_nvrm: 3 new NVRM record(s) (gsp_init_failed, init_failed), first on a GPU"
    ]
