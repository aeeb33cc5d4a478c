"""The node-pair judge on the smallest fleets, where a node has one or two partners.

Found by a random hypothesis seed (nodes=3, factor 0.84375): with two partners a node's median is
the mean of its pairs, so at 3 nodes one slow node pulled the fleet's reference down with it and
passed at 0.82 to 0.85 of the others. The CI profile is derandomized, so these cases are spelled
out here rather than left to a seed. Two nodes make one pair: nothing to compare it with.
"""

import importlib
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pair_runs import slow_node, write_pair_run

from rigcheck.distributed.pair_schedule import pair_schedule
from rigcheck.distributed.pair_verdict import PairResult, judge_pairs, load_pair_run

suite = importlib.import_module("suites.distributed.test_node_pairs")
BAND = 0.10
FAST = 40.0
NO_SPEC = SimpleNamespace(figures={})
NO_HOST = SimpleNamespace(find=lambda path: None)  # a head node: not one of the run's nodes


def results(nodes, rates, rounds=None):
    return [
        PairResult(r.index, pair, rates.get(pair, FAST))
        for r in pair_schedule(nodes, rounds)
        for pair in r.pairs
    ]


@pytest.mark.parametrize("factor", [0.84375, 0.82, 0.85, 0.89, 0.5, 0.1])
@pytest.mark.parametrize("bad", [0, 1, 2])
def test_three_nodes_one_slow_node_is_named(bad, factor):
    verdict = judge_pairs(results(3, slow_node(3, bad, slow=FAST * factor)), BAND)
    assert verdict.reference_gbps == FAST
    assert list(verdict.slow_nodes) == [bad]
    assert not verdict.slow_links and not verdict.undecided


@pytest.mark.parametrize("factor", [0.84375, 0.5])
def test_three_nodes_one_slow_link_is_named_and_no_node(factor):
    verdict = judge_pairs(results(3, {(0, 2): FAST * factor}), BAND)
    assert [p.nodes for p in verdict.slow_links] == [(0, 2)]
    assert not verdict.slow_nodes and not verdict.undecided


def test_three_nodes_a_node_just_inside_the_band_passes():
    verdict = judge_pairs(results(3, slow_node(3, 1, slow=FAST * 0.91)), BAND)
    assert verdict.ok and verdict.threshold_gbps == pytest.approx(36.0)


@given(st.integers(3, 5), st.data())
def test_few_nodes_a_slow_node_under_the_band_is_named(nodes, data):
    bad = data.draw(st.integers(0, nodes - 1))
    factor = data.draw(st.floats(0.1, 0.89))
    verdict = judge_pairs(results(nodes, slow_node(nodes, bad, slow=FAST * factor)), BAND)
    assert list(verdict.slow_nodes) == [bad]


@given(st.integers(2, 6), st.data())
def test_few_nodes_within_the_band_of_each_other_pass(nodes, data):
    """Never cry wolf: the reference is never above the fastest pair, so pairs within the band of
    each other all pass whatever the node count."""
    rates = {p: data.draw(st.floats(36.01, 40.0)) for r in pair_schedule(nodes) for p in r.pairs}
    verdict = judge_pairs(results(nodes, rates), BAND)
    assert verdict.ok
    assert verdict.reference_gbps <= max(rates.values())


def test_two_nodes_without_a_floor_say_nothing_was_compared():
    verdict = judge_pairs([PairResult(1, (0, 1), 10.0)], BAND)
    assert verdict.ok and not verdict.compared
    assert verdict.why == "one node pair: no other pair to compare it with"


def test_two_nodes_under_the_floor_are_slow_and_undecided():
    verdict = judge_pairs([PairResult(1, (0, 1), 10.0)], BAND, floor=30.0)
    assert not verdict.compared and [p.nodes for p in verdict.undecided] == [(0, 1)]
    assert verdict.why == "under the class floor 30.00 GB/s"


def test_two_distinct_pairs_are_compared():
    verdict = judge_pairs([PairResult(1, (0, 1), 40.0), PairResult(2, (0, 2), 40.0)], BAND)
    assert verdict.compared


def test_the_suite_skips_two_nodes_without_a_floor_saying_why(tmp_path):
    run = load_pair_run(write_pair_run(tmp_path, 2, rate=12.5))
    with pytest.raises(pytest.skip.Exception) as skipped:
        suite.test_no_slow_node_or_link(run, NO_SPEC, NO_HOST, lambda *a: None)
    assert skipped.value.msg == (
        "cannot judge the node pair (gpu-node-00 <-> gpu-node-01 12.50 GB/s): two nodes make one "
        "pair and there is no other pair to compare it with, and this class has no "
        "node_pair_busbw_gbps floor. Run 3 or more nodes (a slow node is then named at 3)."
    )


def test_the_suite_fails_the_slow_node_of_three(tmp_path):
    run = load_pair_run(write_pair_run(tmp_path, 3, rates=slow_node(3, 2, slow=33.75)))
    with pytest.raises(AssertionError) as failed:
        suite.test_no_slow_node_or_link(run, NO_SPEC, NO_HOST, lambda *a: None)
    assert str(failed.value).startswith(
        "node-pair all-reduce bus bandwidth: slow node gpu-node-02: slow with all 2 partners "
        "(gpu-node-00 <-> gpu-node-02 33.75, gpu-node-01 <-> gpu-node-02 33.75 GB/s). Slow = more "
        "than 10% below the fleet's 40.00 GB/s (median over nodes of each node's upper-median "
        "pair), threshold 36.00 GB/s."
    )
