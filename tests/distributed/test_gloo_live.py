"""The real thing on this machine: torchrun, gloo, two processes. No GPU needed.

The first test is the user's command (`pytest -m "cpu and distributed"`); the others start the
worker through the launcher directly with a rank that stops answering on purpose.
"""

import json
import warnings

import pytest
from live_allreduce import CHECK, only_the_floor_failed

from rigcheck.distributed.launch import run_collectives
from rigcheck.distributed.results import load_run
from rigcheck.reports.certificate import load_certificate

torch = pytest.importorskip("torch", reason="the live checks need a torch (tox selftest has one)")
AREA = "distributed"  # the certificate's area of suites/distributed's checks
QUICK = ["--backend=gloo", "--bytes=4MiB", "--check-bytes=256KiB", "--iters=2", "--warmup=1"]


def test_the_gloo_path_passes_through_pytest_and_torchrun(live_cpu_run):
    """The user's `pytest -m cpu`, live (tests/conftest.py): its distributed checks, their job."""
    certificate = load_certificate(live_cpu_run.report)
    # The bandwidth is judged against the cpu floor; on CI's busy cores it may be under it
    # (tests/live_allreduce.py): then that check alone fails, saying so, and is warned about.
    under = only_the_floor_failed(certificate)
    if under:
        warnings.warn(under, stacklevel=1)
    assert live_cpu_run.ret == (1 if under else 0), live_cpu_run.output[-3000:]
    outcomes = {c["name"]: c["outcome"] for c in certificate["checks"] if c["area"] == AREA}
    passed = {n for n, outcome in outcomes.items() if outcome == "pass"}
    assert passed == {
        "test_process_group_started_on_every_rank",
        "test_allreduce_correct",
        "test_allreduce_bus_bandwidth",
        "test_allgather_and_reducescatter",
    } - ({CHECK} if under else set()), outcomes
    # What the job left behind: one result per rank, named by host, and how torchrun was run.
    collectives = live_cpu_run.report / "collectives"
    run = load_run(collectives)
    host = run.hosts[0]
    files = sorted(p.name for p in (collectives / "results").iterdir())
    assert files == [f"{host}.rank0000.json", f"{host}.rank0001.json"]
    first = json.loads((collectives / "results" / files[0]).read_text())
    assert first["backend"] == "gloo" and first["init"]["ok"] and first["allreduce_check"]["ok"]
    bw = run.bandwidth("allreduce")
    assert bw.verified and bw.world == 2 and bw.nbytes == 64 * 2**20
    assert bw.busbw_gbps == pytest.approx(bw.algbw_gbps)  # 2(n-1)/n = 1 for n = 2
    assert run.launch["argv"][1:4] == ["-m", "torch.distributed.run", "--standalone"]


def test_a_rank_that_stops_answering_is_named(tmp_path):
    """Rank 1 stalls before the all-reduce check; rank 0 waits in it until gloo's 5 s timeout."""
    options = [*QUICK, "--timeout-s=5", "--stall-rank=1", "--stall-at=allreduce_check"]
    run = run_collectives(2, tmp_path, options, timeout_s=120)
    problems = run.problems()
    assert problems[0].startswith(
        "rank 1 (CPU) did not answer: last at 'allreduce_check' "
        "(stalled on purpose by --stall-rank), alive"
    ), problems
    assert any(p.startswith("rank 0 (CPU) failed in 'allreduce_check'") for p in problems)
    assert run.launch["returncode"] != 0 and not run.launch["timed_out"]


def test_the_watchdog_ends_a_job_that_outlives_it(tmp_path):
    """The process group would wait 60 s; the watchdog stops the job at 12 s and still names
    the rank: the one outside the collective while the other waits inside it."""
    options = [*QUICK, "--timeout-s=60", "--stall-rank=1", "--stall-at=allreduce_check"]
    run = run_collectives(2, tmp_path, options, timeout_s=12)
    problems = run.problems()
    assert problems[0] == "the watchdog stopped the torchrun job after 12 s (--collective-timeout)"
    assert problems[1].startswith("rank 1 (CPU) did not answer"), problems
    assert problems[1].endswith("outside the collective call"), problems
