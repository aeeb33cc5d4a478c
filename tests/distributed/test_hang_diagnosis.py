"""Naming the rank that did not answer, from progress files; and the pieces around it."""

import json

import pytest

from rigcheck.distributed.pairs import MeasuredPair, slow_pairs
from rigcheck.distributed.progress import Progress, diagnose, rank_list
from rigcheck.distributed.results import CollectivesError, load_run

END = 1000.0


def entry(rank, stage, index, heartbeat=END - 1, started=END - 100, detail=""):
    return {
        "rank": rank,
        "host": "n1",
        "world_size": 4,
        "stage": stage,
        "stage_index": index,
        "detail": detail,
        "stage_started_at": started,
        "heartbeat_at": heartbeat,
    }


def test_a_rank_whose_heartbeat_stopped_is_named_first():
    progress = {r: entry(r, "allreduce", 3) for r in range(4)}
    progress[2] = entry(2, "allreduce", 3, heartbeat=END - 300)
    found = diagnose(4, {}, progress, stopped_at=END)
    assert found[0].startswith("rank 2 did not answer: last at 'allreduce'")
    assert "heartbeat stopped 300 s before the end" in found[0]
    assert found[1] == "ranks 0, 1, 3 waited for it at 'allreduce'"


def test_a_rank_behind_the_others_is_named():
    progress = {r: entry(r, "allgather", 4) for r in range(4)}
    progress[1] = entry(1, "init_process_group", 1, detail="nccl, timeout 300 s")
    found = diagnose(4, {}, progress, stopped_at=END)
    assert found[0].startswith(
        "rank 1 did not answer: last at 'init_process_group' (nccl, timeout 300 s), alive"
    )
    assert found[1] == "ranks 0, 2, 3 waited for it at 'allgather'"


def test_a_rank_outside_the_collective_while_the_others_wait_inside_is_named():
    progress = {r: {**entry(r, "allreduce", 3), "in_collective": r != 3} for r in range(4)}
    found = diagnose(4, {}, progress, stopped_at=END)
    assert found[0].endswith("alive, 100 s in that stage, outside the collective call")
    assert found[0].startswith("rank 3 did not answer")


def test_all_alive_in_one_stage_is_a_collective_that_never_completed():
    progress = {r: entry(r, "allreduce", 3) for r in range(4)}
    (found,) = diagnose(4, {}, progress, stopped_at=END)
    assert found.startswith("ranks 0-3 all stuck at 'allreduce', all alive")


def test_a_rank_that_never_started_and_one_that_failed():
    results = {0: {"rank": 0, "error": "RuntimeError: timed out", "failed_stage": "allreduce"}}
    progress = {0: entry(0, "done", 9), 1: entry(1, "allreduce", 3)}
    found = diagnose(3, results, progress)
    assert found[0].startswith("rank 2 never started: no progress file")
    assert found[1].startswith("rank 1 did not answer: last at 'allreduce'")
    assert found[-1] == "rank 0 failed in 'allreduce': RuntimeError: timed out"


def test_everyone_finished_is_no_problem():
    results = {r: {"rank": r} for r in range(2)}
    assert diagnose(2, results, {}) == []


@pytest.mark.parametrize(
    ("ranks", "text"), [([0, 1, 2, 3, 4, 6, 7], "0-4, 6, 7"), ([5], "5"), ([1, 2], "1, 2")]
)
def test_rank_lists(ranks, text):
    assert rank_list(ranks) == text


def test_progress_files_are_written_and_kept_fresh(tmp_path):
    progress = Progress(tmp_path, {"host": "n1", "rank": 3, "world_size": 4}).start()
    progress.stage("allreduce", "iteration 1/7")
    progress.note(device={"kind": "cpu"})
    progress.stop()
    written = json.loads((tmp_path / "n1.rank0003.json").read_text())
    assert written["stage"] == "allreduce" and written["stage_index"] == 3
    assert written["detail"] == "iteration 1/7" and written["device"] == {"kind": "cpu"}


def test_a_folder_with_two_runs_in_it_is_refused(tmp_path):
    for host in ("a", "b"):
        path = tmp_path / "results" / f"{host}.rank0000.json"
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps({"rank": 0, "host": host, "world_size": 1}))
    with pytest.raises(CollectivesError, match="a second result for rank 0"):
        load_run(tmp_path)


def test_a_folder_with_files_of_two_jobs_is_refused(tmp_path):
    for rank, run_id in ((0, "job-a"), (1, "job-b")):
        path = tmp_path / "results" / f"n1.rank{rank:04d}.json"
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps({"rank": rank, "host": "n1", "world_size": 2, "run_id": run_id}))
    with pytest.raises(CollectivesError, match="holds files of 2 torchrun jobs"):
        load_run(tmp_path)


def test_a_file_that_is_no_bundle_is_refused(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("{}")
    with pytest.raises(CollectivesError, match=r"not a rigcheck\.collectives-bundle/1 file"):
        load_run(path)


def test_slow_pairs_compare_like_with_like():
    pcie = [MeasuredPair(f"p{i}", "PCIe PIX", 25.0) for i in range(4)]
    far = [MeasuredPair(f"s{i}", "PCIe SYS", 12.0) for i in range(4)]  # slower path, not slow
    slow = MeasuredPair("GPU 3 <-> GPU 5", "PCIe PIX", 10.0)
    assert slow_pairs([*pcie, *far, slow]) == [
        "GPU 3 <-> GPU 5: 10 GB/s, others 25 (median of 4 PCIe PIX pairs)"
    ]


def test_too_few_pairs_of_a_kind_are_not_judged():
    assert slow_pairs([MeasuredPair("a", "NV4", 100.0), MeasuredPair("b", "NV4", 10.0)]) == []


# --- Issue 38: a job the cap stopped with every rank alive and together was slow, not hung ---


def stopped(progress, results=None):
    """A cpu-class job stopped by its 120 s cap at END."""
    from rigcheck.distributed.results import CollectiveRun

    launch = {"timed_out": True, "timeout_s": 120.0, "stopped_at": END, "returncode": -15}
    return CollectiveRun("job", results or {}, progress, launch)


def test_every_rank_alive_in_set_up_when_the_cap_stops_it_is_incomplete():
    progress = {r: entry(r, "init_process_group", 1, detail="gloo, timeout 60 s") for r in range(4)}
    why = stopped(progress).incomplete()
    assert why == (
        "the collective job did not finish within its 120 s cap: every rank alive at "
        "'init_process_group' (gloo, timeout 60 s) when it was stopped"
    )


def test_no_progress_file_at_the_cap_is_a_set_up_that_did_not_finish():
    assert "torch still loading" in stopped({}).incomplete()


@pytest.mark.parametrize(
    "change",
    [
        {"heartbeat_at": END - 300},  # hung or died
        {"stage": "init_process_group", "stage_index": 1},  # behind the others
        {"in_collective": True},  # the others wait inside, this one never came
    ],
)
def test_a_rank_to_blame_is_a_fault_not_incomplete(change):
    progress = {r: entry(r, "allreduce", 3) for r in range(4)}
    progress[2] = {**progress[2], **change}
    run = stopped(progress)
    assert run.incomplete() is None
    assert run.problems()[1].startswith("rank")  # after the watchdog's line, a rank is named


def test_a_job_that_ended_by_itself_is_never_incomplete():
    progress = {r: entry(r, "allreduce", 3) for r in range(4)}
    run = stopped(progress)
    run.launch["timed_out"] = False
    assert run.incomplete() is None
    ended = {0: {"rank": 0, "world_size": 4, "host": "n1"}}
    assert stopped(progress, results=ended).incomplete() is None  # one rank ended


def test_the_cpu_job_the_cap_stopped_skips_incomplete_and_marks_the_run(tmp_path, monkeypatch):
    """The session fixture (rigcheck/plugin/distributed.py): every collective check skips as
    INCOMPLETE and the run's INCOMPLETE list names the job (exit 2, not a pass, not a fault)."""
    from types import SimpleNamespace

    from rigcheck.distributed import launch
    from rigcheck.measure.check import INCOMPLETE_KEY
    from rigcheck.plugin import distributed

    asked = []
    slow = stopped({r: entry(r, "started", 0) for r in range(4)})
    monkeypatch.setattr(launch, "run_collectives", lambda *a, **kw: asked.append(a) or slow)
    options = {"--collectives-dir": str(tmp_path)}
    config = SimpleNamespace(
        getoption=lambda name, default=None: options.get(name, default),
        pluginmanager=None,
        stash=pytest.Stash(),
    )
    fixture = distributed.collective_run._get_wrapped_function()
    request = SimpleNamespace(config=config)
    with pytest.raises(pytest.skip.Exception, match="INCOMPLETE: the collective job did not"):
        fixture(request, None, SimpleNamespace(backend="cpu"), [])
    assert asked[0][3] == distributed.CPU_CAP_S == 120
    assert config.stash[INCOMPLETE_KEY] == [slow.incomplete()]
