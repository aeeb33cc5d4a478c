"""Two in-process suite runs in one test see the same classes: the second run's imports must not
mix a stale submodule with a fresh one (see tests/module_state.py)."""

from __future__ import annotations

import sys

from suite_replays import SuiteRunner

# A package whose check raises a class from one submodule and catches it in another, imported
# the way suites/burnin/test_burnin.py imports rigcheck.burnin.judge and .verdicts.
PACKAGE = {
    "leakpkg/__init__.py": "",
    "leakpkg/errors.py": "class Skip(Exception):\n    pass\n",
    "leakpkg/catcher.py": (
        "from leakpkg.errors import Skip\n\n\n"
        "def caught(fn):\n    try:\n        fn()\n    except Skip:\n        return True\n"
        "    return False\n"
    ),
}
CHECK = """
from leakpkg import errors
from leakpkg.catcher import caught


def test_raised_class_is_the_caught_class():
    def raise_skip():
        raise errors.Skip()

    assert caught(raise_skip)
"""


def test_a_second_inprocess_run_catches_what_it_raises(pytester, monkeypatch):
    for path, text in PACKAGE.items():
        (pytester.path / "lib" / path).parent.mkdir(parents=True, exist_ok=True)
        (pytester.path / "lib" / path).write_text(text)
    monkeypatch.syspath_prepend(str(pytester.path / "lib"))
    monkeypatch.delitem(sys.modules, "leakpkg", raising=False)
    import leakpkg  # noqa: F401  # the package outlives each run; its submodules do not

    target = pytester.makepyfile(test_leak=CHECK)
    runner = SuiteRunner(pytester, "-p", "no:rigcheck.plugin.reports")
    for run in range(2):
        done = runner(target)
        assert done.ret == 0, f"run {run}:\n{done.output[-2000:]}"
