"""The release matrix is really there: the installed amdsmi is the newest the project pins, and
on CI every older release .ci/amdsmi_releases.py installs is found (a missing one would quietly
shrink the matrix to one release)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from amd_real import RELEASES_ENV, older_releases

from rigcheck.testing.amdsmi_sim import release_of

REPO = Path(__file__).resolve().parents[2]


def ci_releases() -> tuple[str, ...]:
    spec = importlib.util.spec_from_file_location(
        "amdsmi_releases", REPO / ".ci/amdsmi_releases.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.RELEASES


def test_the_installed_amdsmi_is_the_newest_release():
    assert release_of(None) >= (7, 0, 2), "tox.ini installs amdsmi==7.0.2 for the self-tests"


def test_on_ci_every_older_release_is_installed():
    if not os.environ.get("CI"):
        return  # by hand: `python .ci/amdsmi_releases.py DIR` and RIGCHECK_AMDSMI_RELEASES=DIR
    found = [p.name for p in older_releases()]
    assert found == sorted(ci_releases()), (
        f"${RELEASES_ENV} holds {found}: tox's selftest env installs them (commands_pre)"
    )
    assert min(release_of(p) for p in older_releases()) == (6, 0, 0)  # ROCm 6.0: the oldest
