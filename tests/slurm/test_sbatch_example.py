"""docs/slurm/rigcheck.sbatch as a user submits it, on a real (single-host) Slurm cluster: two
nodes, class cpu, gloo. Then what it left in the shared folder is judged as a user reads it: each
node's certificates (its facts, and the verdicts on the collectives of both nodes) and the
collective results of both ranks."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from slurm_cluster import NODES, free_port

from rigcheck.distributed.results import load_run
from rigcheck.reports.certificate import load_certificate

pytest.importorskip("torch", reason="the job runs torchrun (tox selftest has a torch)")
REPO = Path(__file__).resolve().parents[2]
SBATCH = REPO / "docs" / "slurm" / "rigcheck.sbatch"
BANDWIDTH = "test_allreduce_bus_bandwidth"


def test_the_sbatch_example_runs_on_two_nodes_and_its_results_are_judged(slurm, tmp_path):
    shared = tmp_path / "runs"
    env = {
        # The docs' CPU-only run: class cpu, no --gpus, one gloo process per node.
        "GPUS_PER_NODE": "0",
        "RIGCHECK_SHARED": str(shared),
        "RIGCHECK_HOME": str(REPO),
        "RIGCHECK_PYTHON": sys.executable,
        "RIGCHECK_RDZV_PORT": str(free_port()),
    }
    job = slurm.submit(["--gpus-per-node=0", str(SBATCH), "cpu"], env, cwd=tmp_path)
    state, exit_code = slurm.wait(job, timeout_s=240)
    output = (tmp_path / f"rigcheck-{job}.out").read_text(errors="replace")
    context = f"job {job}: {state} {exit_code}\n{output[-4000:]}\n{slurm.logs()}"

    # Both ranks reported, each from its own node's torchrun agent, joined by one rendezvous.
    run = load_run(shared / job / "collectives")
    assert sorted(run.ranks) == [0, 1], context
    assert sorted(r["node_rank"] for r in run.ranks.values()) == [0, 1], context
    assert all(r["backend"] == "gloo" for r in run.ranks.values()), context
    assert all(r["init"]["ok"] and r["allreduce_check"]["ok"] for r in run.ranks.values())
    assert run.bandwidth("allreduce").verified and run.bandwidth("allreduce").world == 2

    # Each node's certificates, as `rigcheck report` reads them (validated against the schema).
    bandwidth = set()
    for node in NODES:
        facts = load_certificate(shared / job / "reports" / node)
        assert facts["verdict"] == "pass", (node, failures(facts), context)
        assert facts["class"]["name"] == "cpu" and facts["summary"]["pass"] > 0

        judged = load_certificate(shared / job / "reports" / f"{node}-distributed")
        outcomes = {c["name"]: c["outcome"] for c in judged["checks"]}
        for check in ("test_process_group_started_on_every_rank", "test_allreduce_correct"):
            assert outcomes[check] == "pass", (node, failures(judged), context)
        # The bandwidth is judged (not skipped) against the cpu class's floor and achievable
        # figure; where loopback gloo lands depends on what else CI's two cores do, as in
        # test_two_agents_live.py: pass, warn (under achievable) or fail (under the floor), and
        # that figure alone, with the verdict and the job's exit saying so.
        assert outcomes[BANDWIDTH] in ("pass", "warn", "fail"), (node, failures(judged), context)
        assert set(failures(judged)) <= {BANDWIDTH}, (node, failures(judged), context)
        assert judged["verdict"] == outcomes[BANDWIDTH], (node, failures(judged), context)
        bandwidth.add(outcomes[BANDWIDTH])
    # The job's end: step 3's pytest exit status is the job's (1 where a check failed).
    expected = ("FAILED", "1:0") if "fail" in bandwidth else ("COMPLETED", "0:0")
    assert (state, exit_code) == expected, context
    ran_to_the_end = f"reports: {shared / job}/reports/<node>/" in output
    assert ran_to_the_end == (expected[0] == "COMPLETED"), context


def failures(certificate: dict) -> dict[str, str]:
    return {
        c["name"]: c["message"] for c in certificate["checks"] if c["outcome"] in ("fail", "error")
    }
