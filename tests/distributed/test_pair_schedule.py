"""The node-pair schedule: a round-robin in which no pair meets twice and no node is in two
pairs of one round; an odd node count gives one node the bye each round."""

from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rigcheck.distributed.pair_schedule import full_rounds, pair_schedule

NODES = st.integers(min_value=2, max_value=70)


@given(NODES, st.data())
def test_no_pair_twice_and_no_node_twice_in_a_round(nodes, data):
    rounds = data.draw(st.integers(min_value=1, max_value=full_rounds(nodes)))
    schedule = pair_schedule(nodes, rounds)
    assert [r.index for r in schedule] == list(range(1, rounds + 1))
    met = [pair for r in schedule for pair in r.pairs]
    assert len(met) == len(set(met))
    for r in schedule:
        seated = [n for pair in r.pairs for n in pair] + ([r.bye] if r.bye is not None else [])
        assert sorted(seated) == list(range(nodes))  # everyone once: in a pair or on the bye
        assert (r.bye is None) == (nodes % 2 == 0)
        assert all(a < b for a, b in r.pairs)


@given(NODES)
def test_the_full_schedule_meets_every_pair_once(nodes):
    schedule = pair_schedule(nodes)
    assert len(schedule) == (nodes - 1 if nodes % 2 == 0 else nodes)
    assert sorted(p for r in schedule for p in r.pairs) == list(combinations(range(nodes), 2))
    if nodes % 2:
        assert sorted(r.bye for r in schedule) == list(range(nodes))  # one bye each


def test_four_nodes_in_three_rounds():
    assert [r.pairs for r in pair_schedule(4)] == [
        ((0, 3), (1, 2)),
        ((0, 2), (1, 3)),
        ((0, 1), (2, 3)),
    ]


@pytest.mark.parametrize(("nodes", "rounds"), [(1, None), (0, None), (4, 0), (4, 4), (5, 6)])
def test_impossible_schedules_say_why(nodes, rounds):
    with pytest.raises(ValueError, match="node"):
        pair_schedule(nodes, rounds)
