"""Every detect outcome by the table, each naming the value it expects: one board, a node
mixing boards, a node short of GPUs, look-alikes (one kind, two kinds, checked as another
class), and PCI ids written in lower case as sysfs writes them."""

import pytest

from rigcheck.detect import detect_class, expected_gpu_count, identity_problems
from rigcheck.facts import Facts
from rigcheck.spec import load_all, load_spec

SPECS = load_all()


def node(*boards: tuple[str, str]) -> Facts:
    """A node of (name, PCI device id) boards."""
    devices = [{"index": i, "vendor": "nvidia", "name": name, "pci": {"device_id": pci}}
               for i, (name, pci) in enumerate(boards)]  # fmt: skip
    software = {"torch": {"build": "cuda", "version": "2.13.0"}}
    return Facts({"devices": devices, "software": software, "origin": {"kind": "synthetic"}})


H100 = ("NVIDIA H100 80GB HBM3", "0x2330")
A100 = ("NVIDIA A100-SXM4-80GB", "0x20B2")
A10 = ("NVIDIA A10", "0x2236")
RTX_5080 = ("NVIDIA GeForce RTX 5080", "0x2C02")
L40S_LOWER = ("NVIDIA L40S", "0x26b9")  # sysfs writes hex digits in lower case


@pytest.mark.parametrize(
    ("boards", "expected"),
    [
        ((H100, H100), "h100"),
        ((L40S_LOWER,), "l40s"),
        ((H100, A100), None),  # a mixed node is no class
        ((A100, H100, H100), None),
    ],
)
def test_detect_names_the_class_or_none(boards, expected):
    assert detect_class(node(*boards), SPECS)[0] == expected


def test_a_mixed_node_is_described_board_by_board():
    name, how = detect_class(node(H100, A100), SPECS)
    assert name is None
    assert how.startswith(
        "1 x NVIDIA H100 80GB HBM3 (PCI 0x2330), 1 x NVIDIA A100-SXM4-80GB (PCI 0x20B2) "
        "matches no class"
    )


def test_two_kinds_of_look_alike_are_both_named():
    _, how = detect_class(node(A10, RTX_5080), SPECS)
    assert "NVIDIA A10 looks like class a10g but is not" in how
    assert "NVIDIA GeForce RTX 5080 looks like class rtx5090 but is not" in how


def test_a_look_alike_checked_as_an_unrelated_class_is_not_called_its_look_alike():
    problems = identity_problems(node(A10), load_spec("h100"), SPECS)
    assert len(problems) == 1 and "look-alike of h100" not in problems[0]
    assert "found NVIDIA A10 (PCI 0x2236)" in problems[0]


def test_a_look_alike_checked_as_the_class_it_resembles_says_so():
    (problem,) = identity_problems(node(A10), load_spec("a10g"), SPECS)
    assert ": a look-alike of a10g, not one (PCI id 0x2236" in problem


@pytest.mark.parametrize(
    ("found", "expected"),
    [(8, 8), (4, 4), (2, 2), (1, 1), (7, 8), (3, 4), (6, 8), (16, 1), (0, 1)],
)
def test_partial_counts_are_judged_against_the_next_size_up(found, expected):
    """h100 comes in 1, 2, 4 or 8 (expected/h100.json): a node that lost a GPU (7 of 8) is none
    of those, so it is judged against the next size up, the node it was, and its count check
    fails; more than any size (16), or none found, against the class's default (1)."""
    assert expected_gpu_count(load_spec("h100"), found) == expected


def test_gpus_given_on_the_command_line_win():
    assert expected_gpu_count(load_spec("h100"), 7, override=7) == 7
