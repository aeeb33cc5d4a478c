"""What stands in for AMD's library cannot lie about it: the only stand-in is the simulated C
library under the real amdsmi package, and it refuses what the real one refuses. No test
defines its own amdsmi module or exception classes (the hand-written module these tests used,
tests/amd_fakes.py, answered "N/A" for a process's VRAM, which no amdsmi release does)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from amd_real import healthy_node, real_amdsmi

from rigcheck.testing.amdsmi_sim import import_amdsmi
from rigcheck.testing.amdsmi_sim.node import Node

TESTS = Path(__file__).resolve().parents[1]
HANDWRITTEN = re.compile(r"class AmdSmi\w*Exception|AmdSmi\w*Exception\s*=|fake_amdsmi")


@pytest.fixture
def smi():
    module = real_amdsmi(healthy_node()["devices"][:2])
    module.amdsmi_init()
    yield module
    module.amdsmi_shut_down()


def test_no_test_writes_its_own_amdsmi():
    found = [
        f"{path.relative_to(TESTS)}:{n}"
        for path in TESTS.rglob("*.py")
        if path.name != Path(__file__).name
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if HANDWRITTEN.search(line)
    ]
    assert not found, f"hand-written amdsmi stand-ins: {found}; use tests/amd_real.py"


def test_the_exceptions_are_amdsmis_own(smi):
    assert smi.AmdSmiLibraryException.__module__ == "amdsmi.amdsmi_exception"
    assert smi.AmdSmiLibraryException is not Exception
    assert issubclass(smi.AmdSmiLibraryException, smi.AmdSmiException)


def test_a_wrong_argument_count_is_refused_as_by_the_real_module(smi):
    h = smi.amdsmi_get_processor_handles()[0]
    with pytest.raises(TypeError):
        smi.amdsmi_get_gpu_ecc_count(h)  # the block is missing


def test_a_plain_int_where_an_enum_belongs_is_refused(smi):
    h = smi.amdsmi_get_processor_handles()[0]
    with pytest.raises(smi.AmdSmiParameterException):
        smi.amdsmi_get_temp_metric(h, 1, 0)


def test_the_c_symbol_checks_its_arguments_as_ctypes_does(smi):
    """One argument short at the C level: ctypes refuses it before the library sees it."""
    h = smi.amdsmi_get_processor_handles()[0]
    with pytest.raises(TypeError, match="argument"):
        smi.amdsmi_wrapper.amdsmi_get_gpu_total_ecc_count(h)


def test_a_call_before_init_answers_not_init(smi):
    smi.amdsmi_shut_down()
    with pytest.raises(smi.AmdSmiLibraryException) as raised:
        smi.amdsmi_get_processor_handles()
    assert raised.value.get_error_code() == 32  # AMDSMI_STATUS_NOT_INIT
    smi.amdsmi_init()


def test_a_symbol_the_library_does_not_export_fails_the_import():
    """A wrapper newer than its libamd_smi: ctypes' undefined symbol, not a quiet answer."""
    with pytest.raises(AttributeError, match="undefined symbol"):
        import_amdsmi(Node([]), symbols={"amdsmi_init"})


def test_a_call_the_simulation_cannot_answer_raises_instead_of_succeeding(smi):
    h = smi.amdsmi_get_processor_handles()[0]
    with pytest.raises(NotImplementedError, match="amdsmi_get_gpu_board_info"):
        smi.amdsmi_get_gpu_board_info(h)


def test_a_broken_simulation_is_not_read_as_success(smi):
    node = smi.simulated_node
    del node.devices[0]["ecc_total"]  # the simulation itself fails inside the C callback
    h = smi.amdsmi_get_processor_handles()[0]
    with pytest.raises(KeyError, match="ecc_total"):
        smi.amdsmi_get_gpu_total_ecc_count(h)
