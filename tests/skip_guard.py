"""A skip inside `pytest.raises(X)` fails the test instead of skipping it.

pytest.raises lets every exception it does not expect through, and pytest's Skipped is one: a
test of a failing path (`with pytest.raises(Exit): deadline.arm()`) whose code under test
skips instead of raising reports SKIPPED, and CI stays green while the path is broken (issue
37: the tier deadline's stop turned into a skip passed that way). Installed for every
self-test by tests/conftest.py; a `pytest.raises(pytest.skip.Exception)` that expects the skip
is left alone.
"""

from __future__ import annotations

import functools

import pytest

SKIPPED = pytest.skip.Exception


def install() -> None:
    """Wrap the __exit__ of the context pytest.raises returns (RaisesExc in pytest 9,
    RaisesContext before), once."""
    kind = type(pytest.raises(ValueError))
    if getattr(kind.__exit__, "_skip_guard", False):
        return
    kind.__exit__ = _guarded(kind.__exit__)


def _guarded(exit_):
    @functools.wraps(exit_)
    def __exit__(self, exc_type, exc_val, exc_tb):
        __tracebackhide__ = True
        if exc_type is not None and issubclass(exc_type, SKIPPED) and not _expects(self, exc_type):
            names = ", ".join(e.__name__ for e in _expected(self)) or "an exception"
            pytest.fail(
                f"pytest.raises({names}) saw a skip instead ({exc_val}): the path under test "
                "skipped where it should raise, and a skip would hide that (tests/skip_guard.py)",
                pytrace=True,
            )
        return exit_(self, exc_type, exc_val, exc_tb)

    __exit__._skip_guard = True
    return __exit__


def _expected(context) -> tuple[type[BaseException], ...]:
    found = getattr(context, "expected_exceptions", None)  # pytest 9
    if found is None:
        found = getattr(context, "expected_exception", ())  # pytest 8
    return tuple(found) if isinstance(found, tuple | list) else (found,)


def _expects(context, exc_type: type[BaseException]) -> bool:
    return any(isinstance(e, type) and issubclass(exc_type, e) for e in _expected(context))
