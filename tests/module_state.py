"""Undo what pytester's sys.modules restore leaves behind, so in-process runs stay independent.

pytester (`runpytest_inprocess`, and its fixture's teardown) restores sys.modules to a snapshot,
dropping every module imported since. It does not undo the attribute each import of a submodule
sets on its parent package. When the package was imported before the snapshot, the package keeps
pointing at the dropped submodule: the next `from rigcheck.burnin import judge` finds that stale
attribute and uses the old module, while `from rigcheck.burnin.verdicts import judged` imports a
fresh `rigcheck.burnin.judge`. The suite then raises one copy of `judge.NotApplicable` and
catches the other, and a check that should skip "could not judge".
"""

from __future__ import annotations

import sys
from types import ModuleType


def forget_unloaded_submodules() -> list[str]:
    """Remove each package attribute that names a submodule sys.modules no longer holds as it;
    the next import then loads the submodule afresh and sets the attribute again. Returns the
    dotted names removed."""
    removed = []
    for name, package in list(sys.modules.items()):
        if not issubclass(type(package), ModuleType) or "__path__" not in vars(package):
            continue  # only packages have submodules
        for attr, value in list(vars(package).items()):
            dotted = f"{name}.{attr}"
            stale = issubclass(type(value), ModuleType) and value.__name__ == dotted
            if stale and sys.modules.get(dotted) is not value:
                delattr(package, attr)
                removed.append(dotted)
    return removed
