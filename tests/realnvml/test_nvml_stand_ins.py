"""No stand-in accepts a call the real library refuses.

The hand-written pynvml stand-ins are retired: every NVML read in the self-tests goes through
the real pynvml, with only libnvidia-ml simulated below it (rigcheck/testing/nvml_sim). This file
guards
both halves: no test builds a pynvml of its own again, and the simulator below the binding
refuses what libnvidia-ml refuses.
"""

from __future__ import annotations

import ast
import ctypes
from pathlib import Path

import pynvml
import pytest

from rigcheck.testing.nvml_sim import machine_profile, simulated_nvml
from rigcheck.testing.nvml_sim.capi import SimulatedCrash

TESTS = Path(__file__).resolve().parents[1]


def stand_in_calls(path: Path, root: Path = TESTS) -> list[str]:
    """NVML function names a test file defines itself: a dict key, keyword argument or
    attribute assignment named nvml<Something> bound to a lambda or a function of the file."""
    tree = ast.parse(path.read_text())
    functions = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    found = []
    for node in ast.walk(tree):
        pairs = []
        if isinstance(node, ast.Dict):
            pairs = [(k.value, v) for k, v in zip(node.keys, node.values, strict=True)
                     if isinstance(k, ast.Constant) and isinstance(k.value, str)]  # fmt: skip
        elif isinstance(node, ast.Call):
            pairs = [(k.arg, k.value) for k in node.keywords if k.arg]
        elif isinstance(node, ast.Assign):
            pairs = [(t.attr, node.value) for t in node.targets if isinstance(t, ast.Attribute)]
        for name, value in pairs:
            callable_ = isinstance(value, ast.Lambda) or (
                isinstance(value, ast.Name) and value.id in functions
            )
            if name.startswith("nvml") and name[4:5].isupper() and callable_:
                found.append(f"{path.relative_to(root)}: {name}")
    return found


def test_no_test_builds_its_own_pynvml():
    files = [p for p in TESTS.rglob("*.py") if "nvml_sim" not in p.parts]
    found = [hit for path in files for hit in stand_in_calls(path)]
    assert not found, (
        f"hand-written pynvml calls (use rigcheck/testing/nvml_sim below the real binding "
        f"instead): {found}"
    )


def test_the_scan_finds_a_stand_in(tmp_path):
    """The shape of the retired fabric stand-in: one argument where the binding takes two."""
    sample = TESTS / "realnvml" / "_sample_stand_in.py"
    try:
        sample.write_text("calls = {'nvmlDeviceGetGpuFabricInfo': lambda h: None}\n")
        assert stand_in_calls(sample) == [
            "realnvml/_sample_stand_in.py: nvmlDeviceGetGpuFabricInfo"
        ]
    finally:
        sample.unlink()


def test_the_real_binding_refuses_the_one_argument_fabric_call():
    with simulated_nvml("h100_hgx"):
        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        with pytest.raises(TypeError):
            pynvml.nvmlDeviceGetGpuFabricInfo(h)
        pynvml.nvmlShutdown()


def test_the_library_refuses_a_struct_passed_by_value():
    """What nvidia-ml-py's own wrapper would pass if a caller handed it the struct itself."""
    from rigcheck.facts.nvidia.counters import FabricInfo

    with simulated_nvml("h100_hgx") as lib:
        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        with pytest.raises(SimulatedCrash, match="by value"):
            pynvml.nvmlDeviceGetGpuFabricInfo(h, FabricInfo())
        pynvml.nvmlShutdown()
    assert lib.crashes


def test_the_library_refuses_what_nvml_h_documents():
    with simulated_nvml("a100_sxm", "R525"):
        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        with pytest.raises(pynvml.NVMLError_InvalidArgument):
            pynvml.nvmlDeviceGetNvLinkState(h, 12)  # an A100 has links 0-11
        with pytest.raises(pynvml.NVMLError_FunctionNotFound):
            pynvml.nvmlDeviceGetCurrentClocksEventReasons(h)  # R535 and later
        with pytest.raises(pynvml.NVMLError_InvalidArgument):
            pynvml.nvmlDeviceGetHandleByIndex(1)  # one GPU
        fn = pynvml._nvmlGetFunctionPointer("nvmlDeviceGetName")
        small = ctypes.create_string_buffer(8)
        assert fn(h, small, ctypes.c_uint(8)) == pynvml.NVML_ERROR_INSUFFICIENT_SIZE
        pynvml.nvmlShutdown()
    with simulated_nvml("a100_sxm"), pytest.raises(pynvml.NVMLError_Uninitialized):
        pynvml.nvmlDeviceGetCount()


def test_retired_pages_are_read_back_and_an_unknown_cause_is_refused():
    machine = machine_profile("a100_sxm")  # Ampere answers N/A: a pre-Ampere board's pages
    machine["gpus"][0]["retired_pages"] = {"pending": 0, "double_bit": [0x1000, 0x2000],
                                           "single_bit": []}  # fmt: skip
    with simulated_nvml(machine) as lib:
        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        assert pynvml.nvmlDeviceGetRetiredPages(h, 1) == [0x1000, 0x2000]
        assert pynvml.nvmlDeviceGetRetiredPages(h, 0) == []
        with pytest.raises(pynvml.NVMLError_InvalidArgument):
            pynvml.nvmlDeviceGetRetiredPages(h, 2)  # nvmlPageRetirementCause_t has 0 and 1
        pynvml.nvmlShutdown()
    assert not lib.crashes


def test_a_lost_gpu_answers_gpu_is_lost():
    from rigcheck.testing.nvml_sim import machine_profile

    machine = machine_profile("h100_hgx")
    machine["gpus"][1]["lost"] = True
    with simulated_nvml(machine):
        pynvml.nvmlInit()
        with pytest.raises(pynvml.NVMLError_GpuIsLost):
            pynvml.nvmlDeviceGetHandleByIndex(1)
        pynvml.nvmlShutdown()
