"""pytest option --plan FILE: a job that must fit in this machine's free memory.

Light on import (no torch); the plan is read and validated at configure time, so a bad file stops
the run with a usage error before any check runs. suites/memory/test_plan_fits.py judges it.
"""

import pytest

from rigcheck.memory.errors import ConfigError
from rigcheck.memory.plan import Plan, load_plan

PLAN_KEY = pytest.StashKey["Plan | None"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("rigcheck").addoption(
        "--plan",
        metavar="FILE",
        help="a job as JSON (rigcheck fit's options as keys) that must fit in every device's "
        "free memory, e.g. before renting a long run",
    )


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("--plan", None)
    try:
        config.stash[PLAN_KEY] = load_plan(path) if path else None
    except ConfigError as exc:
        raise pytest.UsageError(f"--plan {path}: {exc}") from None


@pytest.fixture(scope="session")
def memory_plan(pytestconfig: pytest.Config) -> Plan | None:
    """The job given with --plan, or None."""
    return pytestconfig.stash.get(PLAN_KEY, None)
