"""tests/class_turns.py: the turns deal every class once, a changed class always runs, and a
checkout whose history git cannot read runs every class."""

from __future__ import annotations

import subprocess

import class_turns
import pytest

EVERY = class_turns.every_class()


@pytest.fixture
def turns(monkeypatch: pytest.MonkeyPatch):
    """class_turns with its answers from git forgotten before and after the test."""
    for name in ("RIGCHECK_ALL_CLASSES", "RIGCHECK_CLASS_TURN"):
        monkeypatch.delenv(name, raising=False)
    cached = (class_turns.turn, class_turns.changed_classes)  # before a test replaces them
    for function in cached:
        function.cache_clear()
    yield class_turns
    for function in cached:
        function.cache_clear()


def taken(turns, monkeypatch, turn: int | None, changed=frozenset()) -> list[str]:
    monkeypatch.setattr(turns, "turn", lambda: turn)
    monkeypatch.setattr(turns, "changed_classes", lambda: changed)
    return turns.this_turn(EVERY)


def test_the_turns_deal_every_class_exactly_once(turns, monkeypatch):
    dealt = [taken(turns, monkeypatch, t) for t in range(turns.TURNS)]
    assert sorted(n for share in dealt for n in share) == EVERY
    assert all(len(share) >= len(EVERY) // turns.TURNS for share in dealt), dealt


def test_a_class_changed_since_the_last_commit_runs_in_every_turn(turns, monkeypatch):
    for t in range(turns.TURNS):
        assert "h100" in taken(turns, monkeypatch, t, frozenset({"h100"}))


def test_no_turn_or_no_diff_runs_every_class(turns, monkeypatch):
    assert taken(turns, monkeypatch, None) == EVERY
    assert taken(turns, monkeypatch, 1, None) == EVERY
    assert turns.describe() == "per-class self-tests: every class"


def test_the_variables_choose_the_turn_or_every_class(turns, monkeypatch):
    monkeypatch.setenv("RIGCHECK_CLASS_TURN", "4")
    assert turns.turn() == 4 % turns.TURNS
    turns.turn.cache_clear()
    monkeypatch.setenv("RIGCHECK_ALL_CLASSES", "1")
    assert turns.turn() is None


def git(repo, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def test_the_turn_is_the_commit_count_and_the_diff_names_the_changed_class(
    turns, monkeypatch, tmp_path
):
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.email", "ci@example.invalid")
    git(tmp_path, "config", "user.name", "ci")
    (tmp_path / "expected").mkdir()
    for message, name in (("one", "h100.json"), ("two", "a100.json")):
        (tmp_path / "expected" / name).write_text("{}")
        git(tmp_path, "add", ".")
        git(tmp_path, "commit", "-q", "-m", message)
    monkeypatch.setattr(turns, "REPO", tmp_path.resolve())
    assert turns.turn() == 2 % turns.TURNS
    assert turns.changed_classes() == {"a100"}
    (tmp_path / "expected" / "h100.json").write_text('{"edited": true}')  # not committed
    turns.changed_classes.cache_clear()
    assert turns.changed_classes() == {"a100", "h100"}
    assert "a100, h100 changed since HEAD~1" in turns.describe()


def test_a_folder_that_is_not_its_own_checkout_runs_every_class(turns, monkeypatch, tmp_path):
    """A mutation run's copy (build/mutation/...) sits inside the real checkout: its history is
    not the copy's, so no turn is taken there."""
    copy = tmp_path / "copy"
    copy.mkdir()
    git(tmp_path, "init", "-q")
    monkeypatch.setattr(turns, "REPO", copy.resolve())
    assert turns.turn() is None
    assert turns.this_turn(EVERY) == EVERY


def test_every_case_runs_each_turn_and_every_pair_in_its_class_turn(turns, monkeypatch):
    cases = [object() for _ in range(4)]
    pairs = [("h100", cases[0]), ("a100", cases[0]), ("b200", cases[0])]  # one case, 3 classes
    pairs += [(name, cases[1]) for name in EVERY]  # on every class
    pairs += [("cpu", cases[2]), ("m4pro", cases[3])]  # on one class each
    union = set()
    for t in range(turns.TURNS):
        monkeypatch.setattr(turns, "turn", lambda t=t: t)
        monkeypatch.setattr(turns, "changed_classes", lambda: frozenset())
        kept = turns.this_turn_cases(pairs)
        assert {id(c) for _, c in kept} == {id(c) for c in cases}, t
        assert {(n, id(c)) for n, c in pairs if turns.in_turn(n)} <= {(n, id(c)) for n, c in kept}
        assert kept == [p for p in pairs if p in kept]  # the given order
        union |= {(n, id(c)) for n, c in kept}
    assert union == {(n, id(c)) for n, c in pairs}
