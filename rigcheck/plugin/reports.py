"""The reports plugin: options, and one ReportSession per run (not on xdist workers).

Light on purpose: nothing heavy is imported until a suite check is selected.
"""

from __future__ import annotations

import pytest

from rigcheck.reports.location import ROOT_ENV

SESSION_KEY = pytest.StashKey["object"]()
INTERRUPTS_KEY = pytest.StashKey["object"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rigcheck", "rigcheck: machine conformance")
    group.addoption(
        "--report-dir",
        metavar="DIR",
        help=f"write junit.xml, certificate.json and report.html here (default: "
        f"reports/<UTC time>-<host>/, under ${ROOT_ENV} when set)",
    )
    group.addoption(
        "--unmask-serials",
        action="store_true",
        help="keep GPU serial numbers and UUIDs in the reports (masked by default)",
    )


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):  # xdist worker: its controller writes the reports
        return
    from rigcheck.plugin.session import ReportSession
    from rigcheck.reports.ending import Interrupts, report_dir_problem

    chosen = config.getoption("report_dir")
    problem = chosen and report_dir_problem(chosen)
    if problem:
        raise pytest.UsageError(problem)
    interrupts = Interrupts()
    interrupts.install()
    config.stash[INTERRUPTS_KEY] = interrupts
    session = ReportSession(config)
    config.stash[SESSION_KEY] = session
    config.pluginmanager.register(session, "rigcheck-reports-session")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    """Measured figures as junit properties; here, not in the session, so xdist workers do it."""
    from rigcheck.reports.junit import add_figure_properties

    add_figure_properties(item)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Inside pytest-benchmark's wrapper (its comparison is done) and before the terminal
    summary: the final certificate and page, with any regression in the verdict."""
    reports = session.config.stash.get(SESSION_KEY, None)
    if reports is not None:
        reports.finish(session, int(exitstatus))


def pytest_unconfigure(config: pytest.Config) -> None:
    interrupts = config.stash.get(INTERRUPTS_KEY, None)
    if interrupts is not None:
        interrupts.uninstall()
    session = config.stash.get(SESSION_KEY, None)
    if session is not None:
        session.print_verdict()  # last, after pytest's own summary: the run ends with it
        session.release()
        config.pluginmanager.unregister(session)
        del config.stash[SESSION_KEY]
