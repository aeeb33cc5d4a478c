"""The readers of what a job wrote, on real records (data/SOURCES.md): step logs and flight
recorder dumps from a real torchrun job, PyTorch's documented NCCL dump; and their refusals."""

import json
import pickle
import shutil
from pathlib import Path

import pytest

from rigcheck.blame.flight_recorder import find_hang, read_dump, read_dumps
from rigcheck.blame.slow_rank import slow_ranks
from rigcheck.blame.step_reader import JobRecordError, RankSteps, read_step_log, read_step_logs
from rigcheck.blame.steplog import StepLog

DATA = Path(__file__).with_name("data")
HUNG, SLOW = DATA / "hung_rank1_of_3", DATA / "slow_rank2_of_3"


def test_real_step_logs_read_every_rank_and_where_it_ran():
    ranks = read_step_logs(SLOW / "steps")
    assert sorted(ranks) == [0, 1, 2]
    assert [r.header["host"] for r in ranks.values()] == ["node00", "node01", "node02"]
    assert all(len(r.steps) == 20 and len(r.times("compute_s")) == 20 for r in ranks.values())


def test_the_slowed_rank_is_named_with_its_excess():
    found = slow_ranks(read_step_logs(SLOW / "steps"))
    assert [s.rank for s in found] == [2]
    assert 0.3 < found[0].excess < 0.7  # 30 ms of work against 20 ms, on a busy machine
    assert found[0].evidence.startswith("rank 2's compute_s median")


def test_even_ranks_are_not_slow():
    """The hung job's first five steps: every rank did the same work; none is named."""
    assert slow_ranks(read_step_logs(HUNG / "steps")) == []  # 5 steps less warm-up: too few
    even = read_step_logs(SLOW / "steps")
    del even[2]
    assert slow_ranks(even) == []


def test_whole_step_times_alone_blame_nobody_in_a_synchronous_job(tmp_path):
    """Without compute_s the step time is the slowest rank's on every rank: no rank stands out."""
    for path in (SLOW / "steps").iterdir():
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        for line in lines[1:]:
            line.pop("compute_s")
        (tmp_path / path.name).write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert slow_ranks(read_step_logs(tmp_path)) == []


def test_a_line_cut_short_by_a_killed_job_is_dropped(tmp_path):
    text = (SLOW / "steps" / "rank00000.steps.jsonl").read_text()
    (tmp_path / "rank00000.steps.jsonl").write_text(text + '{"step":20,"end":17')
    assert len(read_step_log(tmp_path / "rank00000.steps.jsonl").steps) == 20


@pytest.mark.parametrize(
    ("first_line", "said"),
    [
        ('{"format": "rigcheck.steps", "version": 2, "rank": 0}', "version 2, this rigcheck"),
        ('{"format": "nvrx.straggler", "version": 1, "rank": 0}', "not a rigcheck.steps header"),
        ("step,seconds", "not a rigcheck.steps header"),
        ('{"format": "rigcheck.steps", "version": 1, "rank": "0"}', "no integer 'rank'"),
    ],
)
def test_an_unknown_step_log_is_refused(tmp_path, first_line, said):
    (tmp_path / "rank00000.steps.jsonl").write_text(first_line + "\n")
    with pytest.raises(JobRecordError, match=said):
        read_step_logs(tmp_path)


def test_the_hook_writes_what_the_reader_reads(tmp_path, monkeypatch):
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("LOCAL_RANK", "1")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-aa,GPU-bb")
    log = StepLog(tmp_path, host="node07")
    for _ in range(3):
        with log.compute():
            pass
        log.step_end()
    log.close()
    ranks = read_step_logs(tmp_path / "steps")
    assert ranks[3].header["host"] == "node07" and len(ranks[3].times("compute_s")) == 3
    assert ranks[3].header["cuda_visible_devices"] == "GPU-aa,GPU-bb"


def test_real_dumps_name_the_rank_the_others_wait_on():
    dumps = read_dumps(HUNG / "flight_recorder")
    assert sorted(dumps) == [0, 2] and {d.version for d in dumps.values()} == {"2.10"}
    hang = find_hang(dumps)
    assert (hang.waiting, hang.silent, hang.behind) == ([0, 2], [1], [])
    assert hang.collective == "gloo:all_reduce" and hang.culprits == [1]


def test_a_rank_behind_in_its_own_dump_is_named(tmp_path):
    """NCCL's watchdog dumps every rank, the stuck one too: its last collective is older."""
    shutil.copytree(HUNG / "flight_recorder", tmp_path, dirs_exist_ok=True)
    dump = pickle.loads((tmp_path / "nccl_trace_rank_0").read_bytes())
    dump["pg_status"]["0"].update(last_enqueued_collective=5, last_completed_collective=5)
    (tmp_path / "nccl_trace_rank_1").write_bytes(pickle.dumps(dump))
    hang = find_hang(read_dumps(tmp_path))
    assert (hang.behind, hang.silent, hang.culprits) == ([1], [], [1])


def test_the_documented_nccl_dump_reads_as_finished():
    dump = read_dump(DATA / "nccl_doc_sample" / "nccl_trace_rank_0", 0)
    assert (dump.version, dump.last_enqueued, dump.last_completed) == ("2.5", 2, 2)
    assert dump.group_ranks == (0, 1) and dump.waiting_in is None
    assert find_hang({0: dump}) is None


def test_an_unknown_dump_version_is_refused(tmp_path):
    dump = pickle.loads((HUNG / "flight_recorder" / "nccl_trace_rank_0").read_bytes())
    dump["version"] = "2.11"
    (tmp_path / "nccl_trace_rank_0").write_bytes(pickle.dumps(dump))
    with pytest.raises(JobRecordError, match=r"version '2.11'; this rigcheck reads 2.0 to 2.10"):
        read_dumps(tmp_path)


class Boom:
    def __reduce__(self):
        return (print, ("ran",))


def test_a_dump_that_would_run_code_is_refused_unrun(tmp_path, capsys):
    (tmp_path / "nccl_trace_rank_0").write_bytes(pickle.dumps({"version": "2.10", "x": Boom()}))
    with pytest.raises(JobRecordError, match=r"names builtins\.print: plain data only"):
        read_dumps(tmp_path)
    assert "ran" not in capsys.readouterr().out


def test_a_file_that_is_no_dump_is_refused(tmp_path):
    (tmp_path / "trace_1").write_text("NCCL INFO Bootstrap : Using eth0\n")
    with pytest.raises(JobRecordError, match="not a flight recorder dump"):
        read_dumps(tmp_path)


def ranks_of(works):
    """Hand-made step logs (said so: the bounds' edges, not a job's output): rank -> works."""
    return {
        rank: RankSteps(
            rank, {"rank": rank}, [{"end": i, "compute_s": w} for i, w in enumerate(ws)]
        )
        for rank, ws in works.items()
    }


def test_a_rank_15_percent_slower_is_named_in_a_two_rank_job():
    """Its reference is the other rank alone: against both ranks' median it would seem 7.5 %."""
    steady = [0.020 + 0.0002 * (i % 3) for i in range(20)]
    found = slow_ranks(ranks_of({0: steady, 1: [w * 1.15 for w in steady]}))
    assert [s.rank for s in found] == [1]


def test_an_excess_within_the_steps_noise_is_not_slow():
    """+15 % on a median whose steps swing between 10 and 30 ms: within 4 standard errors."""
    noisy = [0.010 if i % 2 else 0.030 for i in range(20)]
    found = slow_ranks(ranks_of({0: noisy, 1: noisy, 2: [w + 0.003 for w in noisy]}))
    assert found == []
