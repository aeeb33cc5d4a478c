"""Wires the rigcheck pytest plugin into runs from this checkout; nothing else.

A pytest without rigcheck's dependencies (the system's, after README (1) installed them into
~/.rigcheck only) would stop on an ImportError traceback from deep inside the plugin: say in
one line what is missing and which command has it, and exit 4 (usage error, docs/exit-codes.md).
"""

import importlib
import sys

import pytest

# pytest rewrites the asserts of the modules pytest_plugins names, but only those it imports
# itself: mark the package first, or the imports below leave one PytestAssertRewriteWarning
# ("Module already imported so cannot be rewritten") per plugin module in every run's output.
pytest.register_assert_rewrite("rigcheck.plugin")
try:
    importlib.import_module("rigcheck.plugin")
    for _name in importlib.import_module("rigcheck.plugin").pytest_plugins:
        importlib.import_module(_name)
except ImportError as _exc:
    _missing = _exc.name or str(_exc)
    print(
        f"ERROR: this pytest ({sys.executable}) lacks rigcheck's dependencies (no module "
        f"{_missing!r}). Run `~/.rigcheck/bin/rigcheck check` (README (1)), or pytest from an "
        "environment with rigcheck installed: `~/.rigcheck/bin/python -m pytest -m CLASS`, tox",
        file=sys.stderr,
    )
    raise SystemExit(4) from None

pytest_plugins = ["rigcheck.plugin"]
