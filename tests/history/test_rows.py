"""Which GPU a check is about (for a board's history and the `gpu` label), and the digests that
find a board again."""

from __future__ import annotations

import pytest

from rigcheck.history.rows import (
    board_key,
    check_rows,
    first_line,
    gpu_of,
    gpus_of,
    message_about,
    pci_indexes,
)

FACTS = {
    "devices": [
        {"index": 0, "pci": {"bus_id": "00000000:18:00.0"}},
        {"index": 1, "pci": {"bus_id": "00000000:2A:00.0"}},
    ]
}


def check(name: str, outcome: str = "fail", message: str = "", figures=()) -> dict:
    return {"name": name, "outcome": outcome, "message": message, "figures": list(figures)}


@pytest.mark.parametrize(
    ("name", "gpu"),
    [
        ("test_matmul_tflops[gpu3-bf16]", 3),
        ("test_ecc[gpu10]", 10),
        ("test_x[bf16-gpu1]", 1),
        ("test_gpu1_things", None),  # a name, not a parameter
        ("test_device_count", None),
        ("test_x[gpus8]", None),
    ],
)
def test_a_gpu_named_in_the_parameters(name, gpu):
    assert gpu_of(check(name), {}) == gpu


def test_a_failing_figure_s_label_names_the_gpu_a_passing_one_does_not():
    failing = [{"label": "gpu1", "verdict": "fail"}]
    assert gpu_of(check("test_train_step", figures=failing), {}) == 1
    passing = [{"label": "gpu1", "verdict": "pass"}]
    assert gpu_of(check("test_train_step", figures=passing), {}) is None


def test_an_xid_line_names_the_gpu_by_its_pci_address():
    by_pci = pci_indexes(FACTS)  # NVML's 8-digit domain against the kernel's 4-digit one
    assert gpu_of(check("test_no_xid", message="NVRM: Xid (PCI:0000:2a:00): 79"), by_pci) is None
    assert gpu_of(check("test_no_xid", message="Xid 79 on 0000:2a:00.0: off the bus"), by_pci) == 1
    assert gpu_of(check("test_no_xid", message="Xid 79 on 0000:99:00.0"), by_pci) is None


def test_board_keys_are_stable_and_never_the_serial():
    assert board_key("1652923456782") == board_key(" 1652923456782 ")
    assert board_key("1652923456782") != board_key("1652923456781")
    assert "1652923456782" not in board_key("1652923456782")
    assert board_key("") is None and board_key(None) is None
    # What boards without a readable serial answer: never one board shared by the whole fleet.
    for placeholder in ("[N/A]", "[Not Supported]", "N/A", "0000000000000", "  ", "0-0"):
        assert board_key(placeholder) is None, placeholder
    assert board_key("0000000000001") is not None


def test_first_line():
    assert first_line("  one\ntwo") == "one" and first_line("") is None and first_line(None) is None
    assert len(first_line("x" * 900)) == 500


# The form suites/facts/test_kernel_log.py writes (hand-written here): two GPUs in one failure.
TWO_XIDS = (
    "the kernel log (journalctl -k -b, since boot) has GPU fault events: Xid 79 x1 on GPU 0 "
    "(00000000:18:00.0): GPU has fallen off the bus | Xid 48 x2 on GPU 1 (00000000:2A:00.0): "
    "double-bit ECC error. Meanings: NVIDIA Xid errors"
)


def test_a_check_naming_two_gpus_is_a_row_for_each_with_its_own_part():
    certificate = {
        "checks": [{"id": "f::t", **check("test_no_machine_fault_xids", message=TWO_XIDS)}]
    }
    rows = check_rows(certificate, FACTS)
    assert [(r["gpu"], r["message"]) for r in rows] == [
        (0, "Xid 79 x1 on GPU 0 (00000000:18:00.0): GPU has fallen off the bus"),
        (1, "Xid 48 x2 on GPU 1 (00000000:2A:00.0): double-bit ECC error"),
    ]
    assert gpus_of(certificate["checks"][0], pci_indexes(FACTS)) == [0, 1]
    assert gpu_of(certificate["checks"][0], pci_indexes(FACTS)) is None  # not one GPU


def test_a_check_about_the_machine_is_one_row_with_its_message():
    certificate = {"checks": [{"id": "f::t", **check("test_driver", message="too old\nmore")}]}
    assert [(r["gpu"], r["message"]) for r in check_rows(certificate, FACTS)] == [(None, "too old")]


def test_message_about_a_gpu_it_does_not_name_is_the_whole_message():
    assert message_about("Xid 79 on GPU 0 (0000:18:00.0)", "99:00.0") == (
        "Xid 79 on GPU 0 (0000:18:00.0)"
    )
    assert message_about(None, "18:00.0") is None
    assert message_about("plain", None) == "plain"
