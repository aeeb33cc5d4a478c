"""Reading a collective run back (rigcheck.distributed.results): how ranks are named, why a job
did not finish, and recordings that cannot be used, each with its exact words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rigcheck.distributed.results import (
    BUNDLE_SCHEMA,
    CollectiveRun,
    CollectivesError,
    bundle,
    load_run,
    main,
)

HEALTHY = Path(__file__).resolve().parents[2] / "fixtures" / "distributed" / "h100_8x_nvswitch"


def recorded() -> dict:
    return json.loads((HEALTHY / "collectives.json").read_text())


def run_of(data: dict, launch=None) -> CollectiveRun:
    ranks = {e["rank"]: e for e in data["ranks"]}
    progress = {e["rank"]: e for e in data["progress"]}
    return CollectiveRun("recorded.json", ranks, progress, launch)


def test_ranks_are_named_by_gpu_cpu_or_local_rank_and_host_when_several():
    data = recorded()
    run = run_of(data)
    assert run.label(3) == "rank 3 (GPU 3)"
    data["ranks"][1]["device"] = {"kind": "cpu"}
    data["ranks"][2]["device"] = {"kind": "mps"}
    data["ranks"][2]["local_rank"] = 6
    del data["ranks"][4]["device"]
    del data["ranks"][4]["local_rank"]
    run = run_of(data)
    assert [run.label(r) for r in (1, 2, 4)] == [
        "rank 1 (CPU)",
        "rank 2 (local rank 6)",
        "rank 4 (local rank ?)",
    ]
    data["ranks"][7]["host"] = "node-b"
    data["progress"][7]["host"] = "node-b"
    run = run_of(data)
    assert run.hosts == ["hgx-h100-01", "node-b"]
    assert run.label(7) == "rank 7 (node-b GPU 7)"
    assert run.label(0) == "rank 0 (hgx-h100-01 GPU 0)"
    assert run.label(99) == "rank 99 (? local rank ?)"  # a rank nobody wrote about


def test_a_rank_known_only_from_its_progress_file_is_named_from_it():
    data = recorded()
    entry = data["ranks"].pop(5)
    run = run_of(data)
    assert run.label(5) == "rank 5 (GPU 5)"
    assert run.world_size == entry["world_size"] == 8
    assert [r["rank"] for r in run.results()] == [0, 1, 2, 3, 4, 6, 7]


def test_the_largest_world_size_any_rank_reports_is_the_job():
    data = recorded()
    data["progress"][2]["world_size"] = 16  # a rank that saw a bigger job
    run = run_of(data)
    assert run.world_size == 16
    assert "rank 8 (local rank ?) never started" in run.problems()[0]
    assert CollectiveRun("x", {}).world_size is None


def test_a_job_nobody_answered_for_says_so_with_the_log_tail():
    launch = {"timed_out": True, "timeout_s": 599.6, "log_tail": "a\nb\nc\nd\ne\nf\ng\n"}
    run = CollectiveRun("x", {}, {}, launch)
    assert run.problems() == [
        "the watchdog stopped the torchrun job after 600 s (--collective-timeout)",
        "no rank wrote a result or a progress file",
        "c",
        "d",
        "e",
        "f",
        "g",
    ]
    assert CollectiveRun("x", {}).problems() == ["no rank wrote a result or a progress file"]


def test_a_nonzero_exit_with_every_result_in_is_still_a_problem():
    data = recorded()
    launch = {"returncode": 3, "log_tail": "w\nx\ny\nz\n"}
    assert run_of(data, launch).problems() == ["torchrun exited 3: x | y | z"]
    assert run_of(data, {"returncode": 0}).problems() == []
    assert run_of(data, {"returncode": None}).problems() == []
    assert run_of(data).problems() == []


def test_a_watchdog_stop_is_named_before_the_rank_to_blame():
    data = recorded()
    data["ranks"].pop(4)
    launch = {"timed_out": True, "timeout_s": 60.0, "stopped_at": None}
    problems = run_of(data, launch).problems()
    assert problems[0] == "the watchdog stopped the torchrun job after 60 s (--collective-timeout)"
    assert problems[1].startswith("rank 4 (GPU 4)"), problems


def test_backend_is_the_first_rank_that_says_and_p2p_comes_from_each_host():
    data = recorded()
    del data["ranks"][0]["backend"]
    run = run_of(data)
    assert run.backend == "nccl"
    assert run.p2p() == [("hgx-h100-01", data["ranks"][0]["p2p"])]
    for entry in data["ranks"]:
        entry.pop("backend", None)
    assert run_of(data).backend is None


def write_folder(folder: Path, data: dict, launch: dict | None = None) -> None:
    for what, key in (("results", "ranks"), ("progress", "progress")):
        (folder / what).mkdir(parents=True)
        for entry in data[key]:
            (folder / what / f"rank{entry['rank']}.json").write_text(json.dumps(entry))
    if launch is not None:
        (folder / "launch.json").write_text(json.dumps(launch))


def test_a_report_folder_and_its_bundle_read_back_the_same(tmp_path):
    data = recorded()
    write_folder(tmp_path / "run", data, data["launch"])
    run = load_run(tmp_path / "run")
    assert (run.source, run.launch, run.world_size) == (str(tmp_path / "run"), data["launch"], 8)
    assert run.results() == data["ranks"]
    assert main([str(tmp_path / "run"), "-o", str(tmp_path / "b.json"), "--note", "lab"]) == 0
    again = load_run(tmp_path / "b.json")
    assert again.origin == {"kind": "recorded", "note": "lab"}
    assert again.results() == run.results() and again.progress == run.progress
    assert bundle(run, {"kind": "x"}) == {
        "schema": BUNDLE_SCHEMA,
        "origin": {"kind": "x"},
        "launch": data["launch"],
        "ranks": data["ranks"],
        "progress": data["progress"],
    }
    given = {"returncode": 0}
    assert load_run(tmp_path / "run", launch=given).launch is given


def test_a_folder_without_launch_json_has_no_launch(tmp_path):
    write_folder(tmp_path, recorded())
    assert load_run(tmp_path).launch is None


def test_recordings_that_cannot_be_used_say_why(tmp_path):
    with pytest.raises(CollectivesError, match=r"none\.json: no such file or folder$"):
        load_run(tmp_path / "none.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(CollectivesError, match=r"broken\.json: cannot read it: Expecting"):
        load_run(broken)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"schema": "something/2"}))
    with pytest.raises(
        CollectivesError, match=r"not a rigcheck\.collectives-bundle/1 file \(schema something/2\)"
    ):
        load_run(other)


def test_two_results_for_one_rank_name_the_file(tmp_path):
    data = recorded()
    write_folder(tmp_path, data)
    (tmp_path / "results" / "again.json").write_text(json.dumps(data["ranks"][2]))
    with pytest.raises(CollectivesError) as raised:
        load_run(tmp_path)
    assert str(raised.value).endswith(
        "a second result for rank 2: the folder holds two runs; give each run its own --report-dir"
    )


def test_the_bundling_command_line_says_what_it_does_and_needs_its_output(tmp_path, capsys):
    with pytest.raises(SystemExit) as help_asked:
        main(["--help"])
    shown = capsys.readouterr().out
    assert help_asked.value.code == 0
    assert "bundle a collectives report folder into one JSON file (to record it)" in shown
    assert "what machine this was recorded on" in shown
    with pytest.raises(SystemExit) as no_output:
        main([str(tmp_path)])
    assert no_output.value.code == 2
    assert "the following arguments are required: -o/--output" in capsys.readouterr().err
