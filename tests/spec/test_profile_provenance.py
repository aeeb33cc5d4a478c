"""The simulated machines' profiles (rigcheck/testing/nvml_sim, rigcheck/testing/amdsmi_sim) cite
sources a user of
this repository can open: no developer's notes or home folders (test_provenance.py's OUTSIDE)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_provenance import OUTSIDE

ROOT = Path(__file__).resolve().parents[2]
PROFILES = sorted(
    [*(ROOT / "rigcheck/testing/nvml_sim/profiles").rglob("*.json"),
     *(ROOT / "rigcheck/testing/amdsmi_sim/profiles").rglob("*.json"),
     ROOT / "rigcheck/testing/nvml_sim/make_profiles.py"]
)  # fmt: skip


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_profile_names_no_path_outside_the_repository(path):
    # OUTSIDE only: these cite other repositories' files by "owner/repo@commit path".
    found = OUTSIDE.findall(path.read_text(encoding="utf-8"))
    assert not found, f"{path.relative_to(ROOT)} cites what a user cannot open: {found}"


def test_the_check_sees_a_developers_note():
    assert OUTSIDE.findall("figures from /work/shared/reference/hardware.md") != []
