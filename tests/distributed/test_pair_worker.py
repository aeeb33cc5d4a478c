"""The pair worker's pure parts: which ranks make a node, and a job that cannot pair."""

import pytest

from rigcheck.distributed.pair_worker import PairJobError, group_nodes, ranks_of


def test_ranks_are_grouped_by_node_in_rank_order():
    everyone = [(0, "a"), (0, "a"), (1, "b"), (1, "b"), (2, "c"), (2, "c")]
    nodes = group_nodes(everyone)
    assert [(n["node"], n["host"], n["ranks"]) for n in nodes] == [
        (0, "a", [0, 1]),
        (1, "b", [2, 3]),
        (2, "c", [4, 5]),
    ]
    assert ranks_of(nodes, (0, 2)) == [0, 1, 4, 5]


def test_one_node_says_how_to_start_the_job():
    with pytest.raises(PairJobError, match="torchrun --nnodes=2 or more"):
        group_nodes([(0, "a"), (0, "a")])
