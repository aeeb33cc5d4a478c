"""Where rigcheck's suites and spec files are, in a clone and in an installed wheel.

In a clone they sit beside the package (suites/, expected/); a wheel ships them inside it
(rigcheck/suites/, rigcheck/expected/, mapped by setup.py) so `rigcheck check` runs from any
directory. Everything that needs either folder asks here.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def _beside_or_inside(name: str) -> Path:
    inside = PACKAGE_DIR / name
    return inside if inside.is_dir() else PACKAGE_DIR.parent / name


SUITES_DIR = _beside_or_inside("suites")
SPEC_DIR = _beside_or_inside("expected")
# The folder the suites' node ids are relative to: the clone, or the installed package.
ROOT_DIR = SUITES_DIR.parent
INSTALLED = SUITES_DIR.parent == PACKAGE_DIR
# pytest's settings for `rigcheck check`, the same as pyproject's for `pytest -m CLASS` in a clone.
CHECK_INI = PACKAGE_DIR / "check.ini"
