"""Which node meets which, round by round, in the node-pair collectives.

Pairwise node tests find the node or the link that a whole-cluster all-reduce only shows as "the
ring is slow" (Google's cluster-health-scanner pairs every node with a partner and re-pairs the
failures with good nodes; Meta's gcm runs pairwise NCCL tests). rigcheck runs whole rounds: in
each round every node is in exactly one pair (or has the bye when the count is odd), so all pairs
of a round run at once and a node's bandwidth is never shared between two tests. The rounds come
from the circle method of a round-robin tournament: N nodes (N even) meet every other node once in
N - 1 rounds; an odd N gets a dummy partner, the bye, and N rounds. A run may stop after fewer
rounds: two are enough for every node to meet two partners, which is what telling a slow node
from a slow link needs.
"""

from __future__ import annotations

from dataclasses import dataclass

MIN_ROUNDS_TO_ATTRIBUTE = 2  # a node seen with one partner cannot be told from its link


@dataclass(frozen=True)
class Round:
    index: int  # 1-based, as messages and file names say it
    pairs: tuple[tuple[int, int], ...]  # node indices, lower first
    bye: int | None  # the node without a partner this round (odd node counts)


def full_rounds(nodes: int) -> int:
    """How many rounds meet every pair once: N - 1 for even N, N for odd N (one bye each)."""
    return nodes - 1 if nodes % 2 == 0 else nodes


def pair_schedule(nodes: int, rounds: int | None = None) -> list[Round]:
    """The first `rounds` rounds (all of them by default) of a round-robin over `nodes` nodes."""
    if nodes < 2:
        raise ValueError(f"{nodes} node(s): node pairs need at least 2 nodes")
    total = full_rounds(nodes)
    rounds = total if rounds is None else rounds
    if not 1 <= rounds <= total:
        raise ValueError(f"{rounds} rounds: {nodes} nodes have between 1 and {total}")
    seats: list[int | None] = list(range(nodes)) + ([None] if nodes % 2 else [])
    half = len(seats) // 2
    schedule = []
    for index in range(1, rounds + 1):
        pairs, bye = [], None
        for a, b in zip(seats[:half], reversed(seats[half:]), strict=True):
            if a is None or b is None:
                bye = b if a is None else a
            else:
                pairs.append((min(a, b), max(a, b)))
        schedule.append(Round(index, tuple(sorted(pairs)), bye))
        # The circle method: seat 0 stays, everyone else moves one seat round the table.
        seats = [seats[0], seats[-1], *seats[1:-1]]
    return schedule
