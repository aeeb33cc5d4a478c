"""The history and Prometheus options of a run; the work is done by rigcheck.plugin.session once
the final certificate is written (rigcheck.history.run_hook,
rigcheck.history.prometheus_textfile)."""

from __future__ import annotations

import pytest

from rigcheck.history.location import ENV, OFF


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rigcheck", "rigcheck: machine conformance")
    group.addoption(
        "--history",
        metavar="URL",
        help=f"keep this run in this SQLAlchemy database, e.g. postgresql+psycopg://host/db "
        f"(default: ${ENV}, else ~/.local/share/rigcheck/history.db; {OFF}: keep nothing)",
    )
    group.addoption(
        "--prometheus-textfile",
        metavar="DIR",
        help="write rigcheck.prom here for node_exporter's textfile collector",
    )
