"""rigcheck's pytest wiring, all of it: `-p rigcheck.plugin` (or conftest.py's pytest_plugins) loads
the core (class markers, class selection, the facts fixtures) and each area's options, fixtures
and hooks. Nothing outside this package defines a pytest hook or fixture, and nothing below it
imports it back: the judging code (rigcheck.facts, rigcheck.measure, ...) runs without pytest's
plugin machinery, and these modules only connect it to a session.
"""

pytest_plugins = [
    "rigcheck.plugin.core",
    "rigcheck.plugin.reports",
    "rigcheck.plugin.history",
    "rigcheck.plugin.measure",
    "rigcheck.plugin.memory",
    "rigcheck.plugin.distributed",
    "rigcheck.plugin.burnin",
    "rigcheck.plugin.check_crash",
    "rigcheck.plugin.fabric",
    "rigcheck.plugin.gate",
    "rigcheck.plugin.rdma",
]
