"""`--tier quick|standard|acceptance`: run one tier's checks within its time budget.

Loaded with rigcheck.plugin. Without --tier nothing changes. With it, the checks outside the
tier's areas are deselected (as -m would), acceptance turns on its burn-in when none is asked
for, and the tier's deadline (rigcheck.gate.deadline) is armed around every check's phases.
"""

from __future__ import annotations

import os

import pytest

from rigcheck.gate.busy import hide_gpus, unjudged_reason
from rigcheck.gate.deadline import Deadline
from rigcheck.gate.tiers import in_tier, parse_tier, seconds

DEADLINE_KEY = pytest.StashKey[Deadline]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rigcheck", "rigcheck: machine conformance")
    group.addoption(
        "--tier",
        type=parse_tier,
        metavar="TIER",
        help="quick (facts and smoke kernels, 10 s), standard (plus measurements, 2 min) or "
        "acceptance (plus the torchrun job and a burn-in, 10 min); what is not done by the "
        "budget's end is INCOMPLETE, never a pass (docs/gate.md)",
    )
    group.addoption(
        "--tier-budget",
        type=seconds,
        metavar="SECONDS",
        help="the tier's time budget instead of its default (e.g. a slower node's prolog)",
    )
    group.addoption(
        "--busy-node",
        action="store_true",
        help="with --tier quick on a node running other work: hide the GPUs from CUDA (no "
        "context, no kernel) and report the idle-only and kernel checks as NOT JUDGED "
        "(rigcheck/gate/busy.py)",
    )


@pytest.hookimpl(tryfirst=True)  # before anything collects facts: the GPUs are hidden first
def pytest_configure(config: pytest.Config) -> None:
    tier = config.getoption("tier", None)
    if config.getoption("busy_node", False):
        if tier is None or tier.name != "quick":
            raise pytest.UsageError("--busy-node goes with --tier quick (the other tiers load "
                                    "the GPUs, which a busy node's work owns)")  # fmt: skip
        hide_gpus(os.environ)
    if tier is None:
        if config.getoption("tier_budget", None) is not None:
            raise pytest.UsageError("--tier-budget needs --tier quick|standard|acceptance")
        return
    given = config.getoption("tier_budget")
    budget = tier.budget_s if given is None else given
    if budget <= 0:
        raise pytest.UsageError(f"--tier-budget {budget:g}: a budget is a positive number")
    burn_in_given = config.getoption("--burn-in", None) or config.getoption("--burn-in-trace")
    if tier.burn_in_s and not burn_in_given:
        config.option.burn_in = tier.burn_in_s
    config.stash[DEADLINE_KEY] = Deadline(budget, f"tier {tier.name}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tier = config.getoption("tier", None)
    if tier is None:
        return
    from rigcheck.plugin.core import is_suite_item

    outside = [
        item
        for item in items
        if is_suite_item(item) and not in_tier(tier, {m.name for m in item.iter_markers()})
    ]
    if config.getoption("busy_node", False):
        _skip_unjudged(items)
    if outside:
        config.hook.pytest_deselected(items=outside)
        dropped = {id(item) for item in outside}
        items[:] = [item for item in items if id(item) not in dropped]


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    """The tier's budget starts with its first check, not with the process (deadline.py)."""
    deadline = session.config.stash.get(DEADLINE_KEY, None)
    if deadline is not None:
        deadline.start()


def _skip_unjudged(items: list[pytest.Item]) -> None:
    for item in items:
        reason = unjudged_reason(item.nodeid)
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=reason))


def _guarded(item: pytest.Item):
    deadline = item.config.stash.get(DEADLINE_KEY, None)
    if deadline is None:
        return (yield)
    deadline.arm()
    try:
        return (yield)
    finally:
        deadline.disarm()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item):
    return (yield from _guarded(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    return (yield from _guarded(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    return (yield from _guarded(item))
