"""RDMA links under load: no port went down, retrained or gathered errors during the burn-in.

The burn-in reads every RDMA port's error counters before and after the load
(rigcheck/facts/fabric/rdma_counters.py); rigcheck/rdma/counter_verdict.py judges the change.
"""

import warnings

import pytest

from rigcheck.facts.probe import is_error
from rigcheck.rdma.counter_verdict import SOURCE, judge_change

pytestmark = pytest.mark.burn_in


def fabric_applicable(facts) -> bool:
    fabric = facts.data.get("fabric")
    return isinstance(fabric, dict) and fabric.get("applicable") is True


def test_no_rdma_link_flap_during_burn_in(burn_in_trace, facts):
    sampled = burn_in_trace.get("rdma_counters")
    if sampled is None:
        if fabric_applicable(facts):
            pytest.fail(
                "cannot check: this node has RDMA ports but the burn-in trace has no RDMA "
                "counters (recorded by an older rigcheck?): record it again with --burn-in",
                pytrace=False,
            )
        pytest.skip("no RDMA counters in the burn-in trace and no RDMA port on this node")
    before, after = sampled["before"], sampled["after"]
    if not is_error(before) and not is_error(after) and not before["ports"] and not after["ports"]:
        pytest.skip("no RDMA port on this node")
    failures, warned = judge_change(before, after, "burn-in")
    if warned:
        warnings.warn(f"RDMA errors during the burn-in: {'; '.join(warned)}", stacklevel=1)
    assert not failures, (
        f"RDMA links during the burn-in: {'; '.join(failures)} ({SOURCE}; any link down or "
        "retrain fails). A link that flaps under load stalls every collective that crosses it: "
        "reseat or replace the cable or transceiver, and look for 'lost carrier' in the kernel log."
    )
