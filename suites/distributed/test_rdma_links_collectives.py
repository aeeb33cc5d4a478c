"""RDMA links during the collective job: no port went down, retrained or gathered errors while
the torchrun job ran. Local rank 0 of each node samples every RDMA port's error counters before
the process group starts and after it ends (rigcheck/distributed/worker.py); the change is
judged by rigcheck/rdma/counter_verdict.py."""

import warnings

import pytest

from rigcheck.facts.probe import is_error
from rigcheck.rdma.counter_verdict import SOURCE, judge_change

pytestmark = pytest.mark.distributed


def test_no_rdma_link_flap_during_collectives(collective_run):
    sampled = [(r["host"], r["rdma_counters"]) for r in collective_run.results()
               if "rdma_counters" in r]  # fmt: skip
    if not sampled:
        pytest.skip("the collective job recorded no RDMA counters (written by an older rigcheck)")
    if all(not is_error(s["before"]) and not s["before"]["ports"] for _, s in sampled):
        pytest.skip("no RDMA port on the job's nodes")
    failures, warned = [], []
    for host, s in sampled:
        f, w = judge_change(s["before"], s["after"], "collective job")
        failures += [f"{host}: {line}" for line in f]
        warned += [f"{host}: {line}" for line in w]
    if warned:
        warnings.warn(f"RDMA errors during the collective job: {'; '.join(warned)}", stacklevel=1)
    assert not failures, (
        f"RDMA links during the collective job: {'; '.join(failures)} ({SOURCE}; any link down "
        "or retrain fails). Reseat or replace that port's cable or transceiver."
    )
