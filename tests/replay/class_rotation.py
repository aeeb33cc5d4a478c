"""Which classes each broken variant replays on: every original class, and one new class.

Issue 29 added seven classes. Replaying every broken variant on each of them would add minutes
to CI (about 40 s of replays per class), for faults whose judging does not change between
boards of one kind. So each variant runs on every class that was there before, and on one of
the new classes it applies to, in turn: every variant meets a new class's snapshot, and each new
class meets its share of the variants. Their good snapshots still replay in full
(test_good_snapshots.py). Run one new class against every variant with
`RIGCHECK_ALL_VARIANTS=1 pytest tests/replay -k CLASS`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from rigcheck.testing.synthetic_boards import NEW_BOARDS

ROTATED = tuple(NEW_BOARDS)  # the classes issue 29 added, one row each


def rotated_cases(cases: Iterable[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """(class, variant) pairs, the new classes taken in turn, one per variant."""
    cases = list(cases)
    if os.environ.get("RIGCHECK_ALL_VARIANTS"):
        return cases
    kept, turn = [], 0
    variants = {id(v): v for _, v in cases}  # in order; variants are not hashable
    for variant in variants.values():
        names = [n for n, v in cases if v is variant]
        kept += [(n, variant) for n in names if n not in ROTATED]
        new = [n for n in names if n in ROTATED]
        if new:
            kept.append((new[turn % len(new)], variant))
            turn += 1
    return kept
