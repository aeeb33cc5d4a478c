"""tests/live_allreduce.py, the self-tests' rule for the live cpu all-reduce, on certificates
built here: it lets through only the one figure judged under the cpu floor, nothing else."""

from __future__ import annotations

import json

import pytest
from live_allreduce import CHECK, FIGURE, cpu_figure, main, only_the_floor_failed

from rigcheck.verdict import judge

# 0.483 GB/s: fixtures/measurements/cpu-ci-allreduce-recorded.json; 0.312 GB/s: a loaded run
# of .ci/package-selftest (2026-11-25, load average ~11; not recorded); 0.42: in the warning band.
RECORDED, LOADED, WARNED = 0.483, 0.312, 0.42


def certificate(measured: float, others: str = "pass", floor: float | None = None) -> dict:
    judgement = judge(FIGURE, measured, cpu_figure()).as_dict()
    outcome = judgement["verdict"]
    if floor is not None:
        judgement["floor"] = floor
    message = f"all-reduce bus bandwidth {judgement['reason']}" if outcome == "fail" else ""
    checks = [
        {"name": CHECK, "outcome": outcome, "message": message, "figures": [judgement]},
        {"name": "test_allreduce_correct", "outcome": others, "message": "wrong sum on rank 1"},
    ]
    worst = "fail" if "fail" in (outcome, others) else "warn" if outcome == "warn" else "pass"
    return {"verdict": worst, "checks": checks}


def test_a_figure_over_the_floor_passes_and_one_under_it_is_named():
    assert only_the_floor_failed(certificate(RECORDED)) is None
    assert only_the_floor_failed(certificate(WARNED)) is None
    under = only_the_floor_failed(certificate(LOADED))
    assert under.startswith("the live all-reduce measured 0.312 GB/s, under the cpu floor 0.4")


def test_any_other_failure_still_fails():
    with pytest.raises(AssertionError, match="checks other than the all-reduce failed"):
        only_the_floor_failed(certificate(RECORDED, others="fail"))
    with pytest.raises(AssertionError, match="checks other than the all-reduce failed"):
        only_the_floor_failed(certificate(LOADED, others="error"))


def test_a_figure_not_judged_on_the_cpu_floor_or_not_by_its_rule_fails():
    with pytest.raises(AssertionError, match="not judged on the cpu floor"):
        only_the_floor_failed(certificate(LOADED, floor=0.3))
    passed_under_the_floor = certificate(RECORDED)
    passed_under_the_floor["checks"][0]["figures"][0]["measured"] = LOADED
    with pytest.raises(AssertionError):
        only_the_floor_failed(passed_under_the_floor)
    nothing = certificate(RECORDED)
    nothing["checks"][0]["figures"] = []
    with pytest.raises(AssertionError, match="recorded no allreduce_busbw_gbps judgement"):
        only_the_floor_failed(nothing)


def test_the_command_line_wants_exit_1_exactly_when_the_figure_is_under_the_floor(tmp_path):
    path = tmp_path / "certificate.json"
    for measured, status in ((RECORDED, "0"), (WARNED, "0"), (LOADED, "1")):
        path.write_text(json.dumps(certificate(measured)))
        assert main(["live_allreduce.py", str(path), status]) == 0
        wrong = "1" if status == "0" else "0"
        with pytest.raises(AssertionError, match="exit status"):
            main(["live_allreduce.py", str(path), wrong])
    warned_elsewhere = certificate(RECORDED)
    warned_elsewhere["verdict"] = "warn"  # a warning the all-reduce did not give
    path.write_text(json.dumps(warned_elsewhere))
    with pytest.raises(AssertionError, match="warn"):
        main(["live_allreduce.py", str(path), "0"])
