"""tests/skip_guard.py: a test of a failing path cannot report SKIPPED when the path skips.

Each test here catches what the block raised with `except BaseException`, so that a broken
guard makes it fail rather than skip."""

import pytest

from rigcheck.gate.deadline import Deadline


def outcome(block) -> BaseException | None:
    try:
        block()
    except BaseException as raised:  # Skipped and Exit are BaseExceptions
        return raised
    return None


def test_a_skip_inside_pytest_raises_of_exit_fails_the_test():
    def block():
        with pytest.raises(pytest.exit.Exception):
            pytest.skip("the overrun path skipped")

    raised = outcome(block)
    assert isinstance(raised, pytest.fail.Exception), repr(raised)
    assert "pytest.raises(Exit) saw a skip instead (the overrun path skipped)" in str(raised)


def test_a_skip_inside_pytest_raises_of_an_assertion_fails_the_test():
    def block():
        with pytest.raises(AssertionError, match="drained"):
            pytest.skip("not judged")

    assert isinstance(outcome(block), pytest.fail.Exception)


def test_an_expected_skip_is_still_caught():
    def block():
        with pytest.raises(pytest.skip.Exception, match="two nodes"):
            pytest.skip("two nodes make one pair")

    assert outcome(block) is None


def test_the_deadline_stop_is_checked_by_a_test_that_cannot_skip(monkeypatch):
    """issue 37's survivor: Deadline.stop turned into a skip made the deadline tests SKIP."""
    monkeypatch.setattr(Deadline, "stop", lambda self: pytest.skip(self.reason()))
    deadline = Deadline(0, "tier quick")

    def block():
        with pytest.raises(pytest.exit.Exception, match="time budget ran out"):
            deadline.arm()

    assert isinstance(outcome(block), pytest.fail.Exception)
