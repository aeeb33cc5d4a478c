"""A pytest plugin installed with rigcheck: points `pytest -m CLASS` outside a clone to
`rigcheck check CLASS`. Inert everywhere else (it imports nothing heavy and changes nothing)."""

from __future__ import annotations

import re

import pytest

NO_TESTS_COLLECTED = 5


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if exitstatus != NO_TESTS_COLLECTED or config.pluginmanager.has_plugin("rigcheck.plugin"):
        return
    named = _named_class(config.option.markexpr or "")
    if named:
        terminalreporter.write_line(
            f"rigcheck: no rigcheck suites here (pytest -m {named} runs them only in a clone). "
            f"To check this machine from any directory: rigcheck check {named}",
            yellow=True,
        )


def _named_class(markexpr: str) -> str | None:
    from rigcheck.spec import known_classes

    classes = set(known_classes())
    return next((w for w in re.findall(r"[A-Za-z_]\w*", markexpr) if w in classes), None)
