"""The PCIe width read while the burn-in ran, against the board's maximum or the narrower width
the node's platform wires (expected/platforms/): an L4 on g6, a T4 on g4dn and an L40S on g6e
read x8 of x16 and pass there; the same x8 on a bare-metal HGX node fails, naming the reading."""

from __future__ import annotations

import copy

import pytest

from rigcheck.burnin import judge
from rigcheck.platforms import BARE_METAL, allowed, detect_platform, load_platforms
from rigcheck.testing.synthetic_trace import good_trace

PLATFORMS = load_platforms()
TRACE = good_trace(gpus=2, duration_s=30.0)

# (DMI sys_vendor, product_name) as each machine's firmware names it -> the platform
MACHINES = [
    (("Amazon EC2", "g4dn.xlarge"), "aws_g4dn"),
    (("Amazon EC2", "g6.2xlarge"), "aws_g6"),
    (("Amazon EC2", "gr6.4xlarge"), "aws_g6"),
    (("Amazon EC2", "g6.48xlarge"), BARE_METAL),  # 8 L4s: the x8 source covers single-GPU sizes
    (("Amazon EC2", "g6e.2xlarge"), "aws_g6e"),
    (("Amazon EC2", "p5.48xlarge"), BARE_METAL),  # no file: the class spec as written
    (("Supermicro", "SYS-821GE-TNHR"), BARE_METAL),  # an HGX H100 board
]


@pytest.mark.parametrize(("dmi", "platform"), MACHINES)
def test_the_platform_is_what_the_firmware_names(dmi, platform):
    vendor, product = dmi
    found = detect_platform({"sys_vendor": vendor, "product_name": product}, PLATFORMS)
    assert found == platform
    assert detect_platform(None, PLATFORMS) == BARE_METAL  # no DMI (macOS, some ARM boards)


def loaded_at(width: int) -> dict:
    """The good trace with GPU 1 reading `width` lanes the whole load (its max stays x16)."""
    trace = copy.deepcopy(TRACE)
    device = trace["devices"][1]
    device["samples"]["pcie_width"] = [width for _ in device["samples"]["t_s"]]
    return trace


@pytest.mark.parametrize("platform", ["aws_g4dn", "aws_g6", "aws_g6e"])
def test_x8_under_load_passes_on_a_platform_that_wires_x8(platform):
    assert allowed(PLATFORMS, platform, "pcie_width") == 8
    assert judge.link_width(loaded_at(8), allowed(PLATFORMS, platform, "pcie_width")) == []


def test_x8_under_load_fails_on_bare_metal_naming_the_reading():
    problems = judge.link_width(loaded_at(8), allowed(PLATFORMS, BARE_METAL, "pcie_width"))
    assert problems == [
        "gpu1 (NVIDIA H100 80GB HBM3, 0000:2a:00.0): x8 under load (median of the burn-in's "
        "readings), max x16"
    ]


def test_x4_under_load_fails_even_where_the_platform_wires_x8():
    problems = judge.link_width(loaded_at(4), 8)
    assert problems == [
        "gpu1 (NVIDIA H100 80GB HBM3, 0000:2a:00.0): x4 under load (median of the burn-in's "
        "readings), max x16, "
        "the platform wires x8"
    ]


def test_the_idle_narrow_reading_after_the_load_is_not_judged():
    """The synthetic GPUs drop to x8 once the load stops (sampled then too): still a pass."""
    assert judge.link_width(TRACE) == []


def test_a_trace_without_the_width_column_skips_saying_why():
    trace = copy.deepcopy(TRACE)
    for device in trace["devices"]:
        del device["samples"]["pcie_width"]
    with pytest.raises(judge.NotApplicable, match="no PCIe width"):
        judge.link_width(trace)


def test_a_bad_platform_name_is_one_line_naming_the_known_ones(pytester):
    result = pytester.runpytest_subprocess("-p", "rigcheck.plugin", "--platform", "aws_g99")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--platform aws_g99: no such platform. Known: aws_g4dn*"])
