"""The epilog's new NVRM records (rigcheck.gate.epilog.new_nvrm) on real kernel-log lines
(fixtures/realworld/kernel_log.json), read by the probe's own parser as the facts snapshot reads
them (rigcheck.facts.kernel_log.nvrm.parse_nvrm)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from rigcheck.facts.kernel_log.nvrm import parse_nvrm
from rigcheck.gate.epilog import leftovers, new_nvrm, root_cause_line

ROOT = Path(__file__).resolve().parents[2]
H100 = json.loads((ROOT / "fixtures" / "snapshots" / "h100.json").read_text())
CORPUS = json.loads((ROOT / "fixtures" / "realworld" / "kernel_log.json").read_text())
# gpu-operator#649: GPU 0000:04:01.0 fails to initialize at 1097 s, GPU 0000:04:02.0 at 1102 s.
TWO_GPUS = next(
    [line for line, _ in i["lines"]]
    for i in CORPUS["nvidia"]
    if i["source"].endswith("gpu-operator/issues/649")
)


def facts_with(lines: list[str]) -> dict:
    facts = copy.deepcopy(H100)
    facts["kernel_log"]["nvrm_events"] = parse_nvrm(lines)
    return facts


def test_a_second_gpu_failing_the_same_way_during_the_job_is_new():
    # The prolog's snapshot holds 04:01.0's record; during the job 04:02.0 fails the same way.
    # Same kind, another GPU and time: a new record, not the old one seen again.
    before, after = facts_with(TWO_GPUS[:2]), facts_with(TWO_GPUS)
    assert [e["bus_id"] for e in after["kernel_log"]["nvrm_events"]] == [
        "0000:04:01.0",
        "0000:04:02.0",
    ]
    assert root_cause_line(leftovers(before, after)) == (
        "job_left_nvrm: 1 new NVRM record(s) (init_failed), first on 0000:04:02.0"
    )


def test_the_same_records_read_again_after_the_job_are_not_new():
    assert new_nvrm(facts_with(TWO_GPUS), facts_with(TWO_GPUS)) == []
