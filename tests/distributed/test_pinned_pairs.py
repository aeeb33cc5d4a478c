"""The node-pair verdict pinned where realistic bugs hide (tests/mutation/realistic/pairs.toml):
a slow pair is a slow link only when BOTH its nodes are fast with another partner, and a result
that does not say its all-reduce summed right is not taken as verified."""

from __future__ import annotations

from rigcheck.distributed.pair_verdict import PairResult, PairRun, judge_pairs


def test_a_slow_pair_is_a_link_only_when_both_nodes_are_fast_elsewhere():
    """Node 1 met only node 0, and slowly: node 0 is fast elsewhere, node 1 unknown."""
    slow = PairResult(1, (0, 1), 10.0)
    results = [slow, PairResult(2, (0, 2), 40.0), PairResult(3, (0, 3), 40.0),
               PairResult(2, (2, 3), 40.0)]  # fmt: skip
    verdict = judge_pairs(results, 0.10)
    assert verdict.slow_pairs == [slow]
    assert (verdict.slow_links, verdict.undecided, verdict.slow_nodes) == ([], [slow], {})


def test_both_nodes_fast_elsewhere_make_it_a_slow_link():
    slow = PairResult(1, (0, 1), 10.0)
    results = [slow, PairResult(2, (0, 2), 40.0), PairResult(2, (1, 3), 40.0),
               PairResult(3, (2, 3), 40.0)]  # fmt: skip
    verdict = judge_pairs(results, 0.10)
    assert (verdict.slow_links, verdict.undecided) == ([slow], [])


def run(entry: dict) -> PairRun:
    plan = {"nodes": [{"host": "gpu-a"}, {"host": "gpu-b"}], "rounds": [[[0, 1]]]}
    return PairRun("run", plan, {(1, 0, 1): entry})


def test_a_result_that_does_not_say_it_was_verified_is_missing():
    entry = {"round": 1, "nodes": [0, 1], "busbw_gbps": 40.0}  # no "verified": not checked
    assert run(entry).missing() == ["round 1 gpu-a <-> gpu-b: the all-reduce gave a wrong sum"]
    assert run(entry | {"verified": False}).missing() == run(entry).missing()
    assert run(entry | {"verified": True}).missing() == []


def test_the_reference_is_the_median_of_each_nodes_median_pair():
    """Each node's typical pair (its median), not its best: a fleet whose pairs spread from 35
    to 40 GB/s has a reference of 38 and no slow pair at a 10% band."""
    rates = {(0, 1): 35.0, (0, 2): 38.0, (0, 3): 38.0, (1, 2): 38.0, (1, 3): 38.0, (2, 3): 40.0}
    results = [PairResult(1, pair, rate) for pair, rate in rates.items()]
    verdict = judge_pairs(results, 0.10)
    assert verdict.reference_gbps == 38.0 and verdict.ok, verdict
