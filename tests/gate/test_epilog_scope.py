"""The epilog on a node shared by several jobs: only the job's own GPUs' processes are its
leftovers (issue 25). The job's GPUs come from slurmd's Prolog/Epilog environment
(SLURM_JOB_GPUS, CUDA_VISIBLE_DEVICES: rigcheck.gate.epilog.job_gpus); unknown ones on a shared
node mean no process is judged. Snapshot: the synthetic h100 one (fixtures/snapshots)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from rigcheck.gate.epilog import (
    EVERY_GPU,
    ProcessScope,
    job_gpus,
    leftovers,
    process_scope,
)

H100 = json.loads(
    (Path(__file__).resolve().parents[2] / "fixtures" / "snapshots" / "h100.json").read_text()
)
UUID_0 = "GPU-11111111-2222-3333-4444-555555555555"
UUID_3 = "GPU-66666666-7777-8888-9999-000000000000"


def node_with_processes(on_0: list[int], on_3: list[int]) -> dict:
    """Two GPUs, index 0 and 3, each with its UUID and these pids on it."""
    facts = copy.deepcopy(H100)
    gpu = facts["devices"][0]
    facts["devices"] = [
        {**copy.deepcopy(gpu), "index": 0, "uuid": UUID_0, "processes": [{"pid": p} for p in on_0]},
        {**copy.deepcopy(gpu), "index": 3, "uuid": UUID_3, "processes": [{"pid": p} for p in on_3]},
    ]
    return facts


def lines(found) -> list[str]:
    return [f.line for f in found]


@pytest.mark.parametrize(
    ("env", "gpus"),
    [
        ({"SLURM_JOB_GPUS": "0,3"}, {"0", "3"}),
        ({"SLURM_JOB_GPUS": "3", "CUDA_VISIBLE_DEVICES": "3"}, {"3"}),
        ({"CUDA_VISIBLE_DEVICES": "1, 2"}, {"1", "2"}),  # gres.conf without the index var
        ({"SLURM_JOB_GPUS": "3", "CUDA_VISIBLE_DEVICES": UUID_3}, {UUID_3}),  # a UUID wins
        ({"SLURM_JOB_GPUS": "0", "CUDA_VISIBLE_DEVICES": f"{UUID_0},MIG-abc"}, {UUID_0, "MIG-abc"}),
        ({"SLURM_JOB_GPUS": "3", "CUDA_VISIBLE_DEVICES": f"{UUID_3},1"}, {"3"}),  # mixed: index
        ({}, None),
        ({"SLURM_JOB_GPUS": "", "CUDA_VISIBLE_DEVICES": " , "}, None),
        ({"SLURM_STEP_GPUS": "0"}, None),  # a step's variable: not set in the epilog
    ],
)
def test_the_jobs_gpus_are_read_as_slurmd_sets_them_for_the_epilog(env, gpus):
    assert job_gpus(env) == (None if gpus is None else frozenset(gpus))


def test_only_the_jobs_own_gpus_are_blamed_for_held_processes():
    before = node_with_processes([], [])
    after = node_with_processes([4242], [777])  # 777: another job's rank on GPU 3
    assert lines(leftovers(before, after, ProcessScope(frozenset({"0"})))) == [
        "job_left_process: GPU 0 still held by pid 4242 after the job"
    ]
    assert lines(leftovers(before, after, ProcessScope(frozenset({UUID_3})))) == [
        "job_left_process: GPU 3 still held by pid 777 after the job"
    ]
    assert len(leftovers(before, after, EVERY_GPU)) == 2


def test_a_job_whose_gpus_hold_nothing_leaves_nothing_on_a_busy_node():
    after = node_with_processes([], [777, 778])
    assert leftovers(node_with_processes([], []), after, ProcessScope(frozenset({"0"}))) == []


def test_unjudged_processes_are_not_findings_but_faults_still_are():
    after = node_with_processes([4242], [777])
    after["devices"][1]["throttle_reasons"] = ["hw_slowdown"]
    scope = process_scope(None, ["88"])
    assert lines(leftovers(node_with_processes([], []), after, scope)) == [
        "job_left_throttle: GPU 3: hw_slowdown still active"
    ]


def test_the_scope_follows_what_slurm_said():
    named = process_scope(frozenset({"3", "0"}), None)
    assert named == ProcessScope(frozenset({"0", "3"}), True, named.why)
    assert named.why == "processes judged on the job's GPUs 0,3"
    alone = process_scope(None, [])
    assert alone.gpus is None and alone.judged
    assert alone.why == "processes judged on every GPU: no other job on the node"
    shared = process_scope(None, ["88", "91"])
    assert not shared.judged
    assert shared.why == (
        "GPU processes not judged: the job's GPUs are unknown (no SLURM_JOB_GPUS) and "
        "job(s) 88, 91 also here"
    )
    unknown = process_scope(None, None)
    assert not unknown.judged and unknown.why.endswith("and squeue could not say")


def test_a_scope_that_judges_nothing_covers_no_gpu():
    device = {"index": 0, "uuid": UUID_0}
    assert ProcessScope(frozenset({"0"})).covers(device)
    assert ProcessScope(frozenset({UUID_0})).covers(device)
    assert not ProcessScope(frozenset({"1"})).covers(device)
    assert not ProcessScope(None, judged=False).covers(device)
    assert EVERY_GPU.covers(device)


def test_without_a_prolog_ecc_counters_already_there_are_not_the_jobs():
    after = node_with_processes([], [])
    after["devices"][0]["ecc_errors"] = {**after["devices"][0]["ecc_errors"],
                                         "aggregate_uncorrected": 3}  # fmt: skip
    assert leftovers(None, after) == []
    assert [f.key for f in leftovers(node_with_processes([], []), after)] == ["job_left_ecc"]


@pytest.mark.parametrize("code", ["79", None, True, 79.0])
def test_an_xid_whose_code_cannot_be_read_is_judged_a_fault(code):
    after = copy.deepcopy(H100)
    event = {"t_s": 1.0, "bus_id": "0000:18:00.0", "code": code, "pid": None, "text": "x"}
    after["kernel_log"].update(xid_events=[event], xid_count=1)
    assert [f.key for f in leftovers(H100, after)] == ["job_left_xid"]


def test_a_scope_that_judges_nothing_says_false_not_none():
    assert process_scope(None, ["88"]).judged is False
    assert process_scope(None, None).judged is False
