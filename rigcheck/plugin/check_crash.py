"""A check that raises anything but its own verdict fails naming the check, the fact and the error.

A TypeError inside a check is a rigcheck bug, but the user still needs a verdict that says
what could not be judged: the check, the last fact it read through rigcheck.require, and
the exception, in one line instead of a traceback.
"""

from __future__ import annotations

import pytest

from rigcheck.facts import typed

# pytest's own outcomes (fail, skip, xfail, exit) and an assertion are a check's verdict.
VERDICTS = (
    AssertionError,
    pytest.fail.Exception,
    pytest.skip.Exception,
    pytest.xfail.Exception,
    pytest.exit.Exception,
)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    typed.last_read = None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    from rigcheck.plugin.core import is_suite_item  # the plugin loads this module: import late

    if call.excinfo is None or not is_suite_item(item):
        return report
    exc = call.excinfo.value
    if isinstance(exc, VERDICTS):
        return report
    fact = typed.last_read or "no fact read yet"
    report.outcome = "failed"
    report.longrepr = (
        f"{item.name} could not judge ({call.when}): it raised {type(exc).__name__}: {exc} "
        f"after reading {fact}. The fact has a shape this check does not handle, a rigcheck "
        "bug: report it with the snapshot (`rigcheck facts -o FILE`)."
    )
    return report
