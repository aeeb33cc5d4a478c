"""The IOMMU check judges what the kernel did to each GPU (its group's domain type) where the
snapshot says it, and only falls back to the boot flags where it does not."""

import pytest

from rigcheck.spec import load_spec
from rigcheck.testing.synthetic import synthetic_snapshot

CHECK = "test_iommu_not_translating_p2p"


def node(types, groups=120, cmdline=("intel_iommu=on",)):
    """An 8-GPU H100 node whose GPUs' IOMMU groups have these domain types."""
    snapshot = synthetic_snapshot(load_spec("h100"), gpus=8)
    snapshot["host_limits"]["iommu"] = {"groups": groups, "cmdline": list(cmdline)}
    for i, entry in enumerate(snapshot["host_limits"]["iommu_devices"]):
        kind = types[i % len(types)]
        entry.update(group=None if kind is None else 20 + i, type=kind)
    return snapshot


def run(replay, snapshot):
    return replay(snapshot, "-m", "h100", "--gpus", "8", "-k", "iommu")


def test_a_kernel_that_passes_through_by_default_passes_without_a_flag(replay):
    """CONFIG_IOMMU_DEFAULT_PASSTHROUGH: groups exist, no iommu=pt, every group is identity."""
    result = run(replay, node(["identity"], cmdline=()))
    assert result.ret == 0 and "1 passed" in result.output, result.describe()


@pytest.mark.parametrize("kind", ["DMA", "DMA-FQ", "blocked"])
def test_one_translated_gpu_fails_even_with_iommu_pt_on_the_command_line(replay, kind):
    """The flag asked for passthrough; the kernel's answer for GPU 3 is what counts."""
    types = ["identity"] * 3 + [kind] + ["identity"] * 4
    result = run(replay, node(types, cmdline=("intel_iommu=on", "iommu=pt")))
    message = result.failed[CHECK]
    assert "GPU 3 0000:" in message and f"group 23 ({kind})" in message, message
    assert "GPU 2" not in message and "iommu=pt" in message


def test_an_unknown_type_is_judged_by_the_boot_flags(replay):
    """A kernel before 5.11 (no type file): iommu=pt passes, no flag fails as before."""
    old = {"error": "/sys/bus/pci/devices/0000:18:00.0/iommu_group/type does not exist"}
    snapshot = node([old], cmdline=("intel_iommu=on", "iommu=pt"))
    assert run(replay, snapshot).ret == 0
    snapshot["host_limits"]["iommu"]["cmdline"] = ["intel_iommu=on"]
    assert "no per-device domain type" in run(replay, snapshot).failed[CHECK]


def test_a_type_that_is_no_domain_type_fails_closed(replay):
    result = run(replay, node(["unknown"]))
    assert "cannot" in result.failed[CHECK] and "iommu_devices.0.type" in result.failed[CHECK]
