"""torch's ROCm against the host's kernel driver, by AMD's current support matrix
(rigcheck/facts/amd/rocm.py SUPPORT_MATRIX): from ROCm 6.4.0 up to a year apart, before it +/- 2
releases. The case the old "+/- 2 releases" rule failed: a host on ROCm 6.1 (KMD 6.1.x) with a
torch built for ROCm 6.4, which AMD supports."""

from __future__ import annotations

import importlib

import pytest
from check_calls import call

from rigcheck.facts import Facts
from rigcheck.facts.amd import rocm
from rigcheck.spec import load_spec
from rigcheck.testing.synthetic import synthetic_snapshot

amd_health = importlib.import_module("suites.facts.test_amd_health")


def judged(hip: str, installed: str | None, kernel_driver: str) -> tuple[str, str]:
    spec = load_spec("mi300x")
    facts = Facts(synthetic_snapshot(spec))
    facts.data["software"]["torch"]["hip_version"] = hip
    facts.data["software"]["rocm"].update(installed=installed, kernel_driver=kernel_driver)
    check = amd_health.test_torch_rocm_within_kernel_driver_window
    outcome, message, _ = call(check, spec, facts, facts.devices)
    return outcome, message


@pytest.mark.parametrize(
    ("hip", "installed", "driver", "outcome"),
    [
        ("6.4.43482", "6.1.3-122", "6.7.0", "passed"),  # 3 releases apart, supported since 6.4.0
        ("5.7.31921", "6.1.3-122", "6.7.0", "passed"),  # the row's oldest
        ("6.2.41133", "5.7.1-98", "6.2.4", "failed"),  # KMD 5.7.x: user space 5.5-6.1
        ("7.0.51831", "6.1.3-122", "6.7.0", "failed"),  # KMD 6.1.x stops at 6.4
        ("7.0.51831", None, "30.10.1", "passed"),  # amdgpu 30.10, no ROCm on the host
        ("6.1.40091", None, "30.10.1", "failed"),  # 30.10 starts at 6.2
        ("6.2.41133", "7.2.0-43", "6.16.6", "failed"),  # a driver the matrix lacks: cannot judge
        ("6.2.41133", None, "6.8.0-45-generic", "skipped"),  # in-tree driver, no release to place
    ],
)
def test_the_driver_row_decides(hip, installed, driver, outcome):
    assert judged(hip, installed, driver)[0] == outcome


def test_a_failure_names_the_supported_releases_the_page_and_what_to_install():
    outcome, message = judged("6.2.41133", "5.7.1-98", "6.2.4")
    assert outcome == "failed"
    assert "user space 5.5, 5.6, 5.7, 6.0, 6.1 only" in message
    assert "user-kernel-space-compat-matrix" in message and "whl/rocm6.1" in message


def test_a_driver_missing_from_the_matrix_says_where_to_look_it_up():
    outcome, message = judged("6.2.41133", "7.2.0-43", "6.16.6")
    assert outcome == "failed"
    assert message.startswith("cannot judge: the host's kernel driver (release 7.2")
    assert "SUPPORT_MATRIX" in message


@pytest.mark.parametrize(
    ("kernel_driver", "installed", "row"),
    [
        ("30.10.1", "7.0.0-38", "30.10"),  # the driver's own release wins
        ("31.40.1", None, "31.40"),
        ("6.7.0", "6.1.3-122", "6.1"),  # an older dkms driver: the ROCm installed with it
        ({"error": "no driver"}, "6.3.1", "6.3"),
        ("6.7.0", None, None),
        # ROCm 7.0's driver is 30.10 even where its module reports the DKMS version
        ("6.14.14", "7.0.0-38", "30.10"),
        ("6.14.14", "7.1.0-12", "7.1"),  # a release the table does not map: itself
    ],
)
def test_driver_release(kernel_driver, installed, row):
    assert rocm.driver_release(kernel_driver, installed) == row
