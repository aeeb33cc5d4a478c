"""Which device classes this run's costly per-class self-tests take: a quarter of them in turn.

A few self-tests replay the real suites once per class (tests/replay/test_fact_mutations.py,
test_broken_variants.py, the synthetic 8-GPU nodes of test_good_snapshots.py, the per-class
floors of tests/boundaries): the judging code is the same for every class, only the spec and
snapshot differ. CI takes one turn of the classes per commit, the next turn on the next commit
(the turn is the commit count modulo TURNS), so any four consecutive commits cover every
class, and a failure reproduces on its commit. Always taken as well: every class whose
expected/<class>.json or fixtures/snapshots/<class>.json differs from HEAD~1 (edits not yet
committed included), so a change to a class's figures is tested by its own commit. The run's
header names its turn and classes.

    RIGCHECK_ALL_CLASSES=1 pytest tests/...    every class (what a mutant run always gets)
    RIGCHECK_CLASS_TURN=2 pytest tests/...     turn 2, as the header of a CI run names it

Fail closed: where git cannot say the commit count or what changed (no git, a shallow clone, a
copy that is not its own checkout, as tools/mutation*.py make), every class runs; a missing
history never means fewer tests.
"""

from __future__ import annotations

import functools
import os
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

TURNS = 4
REPO = Path(__file__).resolve().parents[1]
WATCHED = ("expected", "fixtures/snapshots")  # a class's figures and its good snapshot


def _git(*args: str) -> str | None:
    """git's output in the checkout, or None when git cannot answer."""
    try:
        done = subprocess.run(
            ["git", "-C", str(REPO), *args], capture_output=True, text=True, timeout=20
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


@functools.cache
def turn() -> int | None:
    """This run's turn, 0 .. TURNS-1; None: every class."""
    if os.environ.get("RIGCHECK_ALL_CLASSES"):
        return None
    forced = os.environ.get("RIGCHECK_CLASS_TURN")
    if forced:
        return int(forced) % TURNS
    if not _own_checkout() or _git("rev-parse", "--is-shallow-repository") != "false\n":
        return None
    count = _git("rev-list", "--count", "HEAD")
    return int(count) % TURNS if count else None


def _own_checkout() -> bool:
    """Whether these tests are the checkout git describes, not a copy inside it (a mutation
    run's copy under build/: there a mutant caught or not must not depend on the commit)."""
    top = _git("rev-parse", "--show-toplevel")
    return top is not None and Path(top.strip()).resolve() == REPO


@functools.cache
def changed_classes() -> frozenset[str] | None:
    """Classes whose spec or good snapshot differs from HEAD~1; None when git cannot say."""
    names = _git("diff", "--name-only", "HEAD~1", "--", *WATCHED)
    if names is None:
        return None
    return frozenset(Path(n).stem for n in names.split() if n.endswith(".json"))


def in_turn(name: str) -> bool:
    """Whether this run takes the class `name` (the turns deal the sorted classes in order)."""
    current, changed = turn(), changed_classes()
    if current is None or changed is None or name in changed:
        return True
    return every_class().index(name) % TURNS == current


def this_turn(names: Iterable[str]) -> list[str]:
    """The classes of `names` this run takes."""
    return [n for n in names if in_turn(n)]


def this_turn_cases(cases: Iterable[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """The (class, case) pairs this run takes: those of this turn's classes, and for a case none
    of whose classes is in this turn, one of its classes (by turn), so that every case still
    runs on every commit. Every pair runs in its class's turn."""
    cases = list(cases)
    kept = {(n, id(c)) for n, c in cases if in_turn(n)}
    alone = {id(c): c for _, c in cases if not any(id(c) == k for _, k in kept)}
    for case in alone.values():  # by id, in order: a case need not be hashable
        names = [n for n, c in cases if c is case]
        kept.add((names[(turn() or 0) % len(names)], id(case)))
    return [(n, c) for n, c in cases if (n, id(c)) in kept]


def every_class() -> list[str]:
    from rigcheck.spec import known_classes

    return sorted(known_classes())


def describe() -> str:
    """One line for the run's header: which turn, which classes, how to repeat or widen it."""
    current, changed = turn(), changed_classes()
    if current is None or changed is None:
        return "per-class self-tests: every class"
    taken = ", ".join(this_turn(every_class()))
    extra = f"; {', '.join(sorted(changed))} changed since HEAD~1" if changed else ""
    return (
        f"per-class self-tests: turn {current} of {TURNS} ({taken}{extra}); "
        f"RIGCHECK_CLASS_TURN={current} repeats it, RIGCHECK_ALL_CLASSES=1 runs every class"
    )
