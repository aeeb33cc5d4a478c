"""Every amdsmi name rigcheck's AMD code uses exists in each real release, or is one a release is
known to lack and the code checks for first (hasattr) with its fallback present: a name that a
release lacks otherwise would be an AttributeError record on a healthy machine."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from amd_real import RELEASES, healthy_node, real_amdsmi

REPO = Path(__file__).resolve().parents[2]
AMD_CODE = ("rigcheck/facts/amd/smi.py", "rigcheck/facts/amd/smi_releases.py")
# Read only after hasattr(smi, name): absent before ROCm 6.1, 6.3, 6.4 and 7.0's packages.
GUARDED = {"amdsmi_get_pcie_info", "amdsmi_get_gpu_xgmi_link_status",
           "amdsmi_get_gpu_bad_page_threshold", "amdsmi_get_violation_status"}  # fmt: skip
# ROCm 6.0's reads, used only where amdsmi_get_pcie_info is absent (or its process handles).
ROCM_60 = {"amdsmi_get_pcie_link_status", "amdsmi_get_pcie_link_caps",
           "amdsmi_get_gpu_pci_replay_counter", "amdsmi_get_gpu_process_info"}  # fmt: skip


def names_used() -> set[str]:
    text = "".join((REPO / path).read_text() for path in AMD_CODE)
    return set(re.findall(r"\bsmi\.(amdsmi_\w+|AmdSmi\w+)", text))


def test_the_scan_finds_the_calls():
    assert {"amdsmi_init", "amdsmi_get_power_cap_info", "AmdSmiGpuBlock"} <= names_used()


@pytest.mark.parametrize("release", RELEASES)
def test_every_name_exists_or_is_guarded(release):
    module = real_amdsmi(healthy_node()["devices"][:1], path=release)
    missing = {name for name in names_used() if not hasattr(module, name)}
    assert missing <= GUARDED | ROCM_60, f"used but absent from this amdsmi: {missing}"
    if "amdsmi_get_pcie_info" in missing:
        assert not missing & ROCM_60, f"neither ROCm 6.0's reads nor the later ones: {missing}"
