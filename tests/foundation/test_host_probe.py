"""Host probe details that only show on other platforms, through the runner seam."""

import subprocess

from rigcheck.facts.host import system as host

SYSCTL_HW_OPTIONAL = """hw.optional.floatingpoint: 1
hw.optional.AdvSIMD: 1
hw.optional.arm.FEAT_BF16: 1
hw.optional.arm.FEAT_I8MM: 1
hw.optional.arm.FEAT_SME: 1
hw.optional.arm.FEAT_SME2: 1
hw.optional.arm.FEAT_FP16: 0
"""


def fake_run(argv):
    assert argv == ["sysctl", "hw.optional"]
    return subprocess.CompletedProcess(argv, 0, SYSCTL_HW_OPTIONAL, "")


def test_apple_silicon_features_come_from_sysctl_in_py_cpuinfo_names():
    # py-cpuinfo reports no flags on Apple silicon (workhorsy/py-cpuinfo#162).
    assert host._apple_features(fake_run) == {"asimd", "bf16", "i8mm", "sme"}
