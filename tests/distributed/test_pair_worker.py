"""The pair worker's pure parts: which ranks make a node, and a job that cannot pair."""

import pytest

from rigcheck.distributed.pair_worker import PairJobError, build_parser, group_nodes, ranks_of


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


@pytest.mark.parametrize("option", ["--rounds=0", "--ranks-per-node=-1", "--rounds=two"])
def test_counts_must_be_whole_numbers_above_zero(option, capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--report-dir=x", option])
    assert "a whole number above 0" in capsys.readouterr().err
