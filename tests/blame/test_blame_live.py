"""The real thing: a torchrun job (gloo, CPU, 2 ranks) writing rigcheck's step log, rank 0's
work slowed by half and rank 1 stopped (SIGSTOP) at step 10; blame names rank 1's host, rank 0
as slow, and, through the simulated NVML profile of that host, the cause injected there."""

import pytest
from live_job import run_job
from test_blame_cli import blame, node_facts, slowdown_on

from rigcheck.blame.slow_rank import slow_ranks
from rigcheck.blame.suspects import find_suspect, read_job

pytest.importorskip("torch", reason="the live job needs a torch (tox selftest has one)")


def test_a_stopped_rank_and_a_slowed_one_are_named_with_the_cause(tmp_path, capsys):
    folder = tmp_path / "job"
    options = ["--slow-rank=0", "--slow-by=0.5", "--stop-rank=1", "--stop-at=10", "--steps=20"]
    assert run_job(folder, 2, *options, timeout_s=240) is None  # ended after its stall dumps
    job = read_job(folder)
    suspect = find_suspect(job)
    assert (suspect.kind, suspect.ranks, suspect.host) == ("hung", [1], "node01"), suspect
    assert [s.rank for s in slow_ranks(job.ranks)] == [0]  # the ten steps before the stop
    code, out = blame(capsys, folder, "--facts", node_facts(tmp_path, "node01", slowdown_on(0)))
    assert code == 1 and "hung rank 1 on node01: clock_slowdown: GPU 0: hw_slowdown" in out.out
    code, out = blame(capsys, folder, "--facts", node_facts(tmp_path, "clean"))
    assert code == 3 and "node clean" in out.out
