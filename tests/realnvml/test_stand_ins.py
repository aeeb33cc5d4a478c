"""No hand-written pynvml stand-in left in tests/ accepts a call the real binding refuses.

The stand-ins that remain answer from a snapshot's own record (tests/counter_fakes.py); each of
their NVML functions must exist in the real pynvml and take the same arguments, and their error
classes must be the binding's own (an NVMLError that is Exception hides rigcheck's TypeErrors).
"""

from __future__ import annotations

import inspect
import types

import pynvml
import pytest
from counter_fakes import NVML_CONSTANTS, add_counter_fakes

from rigcheck.facts.synthetic import synthetic_snapshot
from rigcheck.spec import load_spec


def counter_stand_in():
    device = synthetic_snapshot(load_spec("h100"), gpus=1)["devices"][0]
    return add_counter_fakes(types.SimpleNamespace(**NVML_CONSTANTS), device)


def arity(fn) -> tuple[int, int]:
    """(required, total) positional parameters."""
    params = [
        p
        for p in inspect.signature(fn).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    return sum(p.default is p.empty for p in params), len(params)


def stand_in_functions():
    fake = counter_stand_in()
    return sorted((n, f) for n, f in vars(fake).items() if n.startswith("nvml") and callable(f))


@pytest.mark.parametrize(
    "name, fake", stand_in_functions(), ids=lambda x: getattr(x, "__name__", x)
)
def test_each_stand_in_call_exists_and_takes_the_real_arguments(name, fake):
    real = getattr(pynvml, name, None)
    assert real is not None, f"{name}: no such function in nvidia-ml-py {_version()}"
    required, total = arity(real)
    fake_required, fake_total = arity(fake)
    assert required <= fake_total and fake_required <= total, (
        f"{name}: the stand-in takes {fake_required}-{fake_total} arguments, the real binding "
        f"{required}-{total}"
    )


def test_stand_in_errors_are_the_bindings_own():
    for name in ("NVMLError", "NVMLError_NotSupported", "NVMLError_FunctionNotFound"):
        assert NVML_CONSTANTS[name] is getattr(pynvml, name), name
    assert NVML_CONSTANTS["NVMLError"] is not Exception


def test_the_check_catches_the_old_one_argument_fabric_stand_in():
    """The stand-in this issue found: one argument where the binding takes two."""
    old = lambda h: None  # noqa: E731 - the shape of the retired stand-in
    required, _ = arity(pynvml.nvmlDeviceGetGpuFabricInfo)
    assert not (required <= arity(old)[1])


def _version() -> str:
    from importlib.metadata import version

    return version("nvidia-ml-py")
