"""Edges of the gate's outcomes that its wider tests pass by: a drain reason that mentions
rigcheck without being rigcheck's, and a busy node's list matched by whole path parts only."""

from rigcheck.gate.busy import unjudged_reason
from rigcheck.gate.slurm import NOTHING, NodeState, decide


def test_an_administrators_drain_that_mentions_rigcheck_is_not_resumed_by_a_pass():
    """Only a reason rigcheck wrote (it starts with "rigcheck: ") is rigcheck's to resume."""
    node = NodeState("gpu7", "drained", "ops: RMA ticket 4411, see rigcheck: xid 79 last week")
    assert not node.drained_by_rigcheck
    action = decide(node, None)
    assert action.kind == NOTHING and "drained by someone else" in action.why


def test_a_busy_node_leaves_unjudged_only_the_listed_checks_not_look_alike_paths():
    listed = "suites/facts/test_health.py::test_no_other_processes"
    assert unjudged_reason(listed) is not None
    assert unjudged_reason("/opt/rigcheck/" + listed) is not None  # an installed copy
    assert unjudged_reason("my_" + listed) is None  # another folder's file of the same name
