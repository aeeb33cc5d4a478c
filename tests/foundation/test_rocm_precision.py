"""MI300X false alarms (issue 10): the fp8 smoke's type, and TF32 that never engaged.

No ROCm device here: the type rule runs on a fake torch that reports a ROCm build and a
gcnArchName; the TF32 detection runs the real matmul code on the CPU, which has no TF32, so
it must report that TF32 was not in effect rather than time fp32 as tf32 silently.
"""

from __future__ import annotations

import types

import pytest
import torch

from rigcheck.facts.host.torch_probe import e4m3_dtype, fp8_matmul_on
from rigcheck.measure import matmul
from rigcheck.measure.device import MeasuredDevice
from rigcheck.measure.rocm_env import TF32_VARIABLE, prepare_rocm_tf32
from rigcheck.measure.timing import Plan, Timer


def fake_torch(hip: str | None, arch: str = "") -> types.SimpleNamespace:
    props = types.SimpleNamespace(gcnArchName=arch)
    return types.SimpleNamespace(
        device=torch.device,
        version=types.SimpleNamespace(hip=hip),
        cuda=types.SimpleNamespace(get_device_properties=lambda device: props),
        float8_e4m3fn=torch.float8_e4m3fn,
        float8_e4m3fnuz=torch.float8_e4m3fnuz,
    )


@pytest.mark.parametrize(
    ("hip", "arch", "dev", "want"),
    [
        ("6.2.41133", "gfx942:sramecc+:xnack-", "cuda:0", torch.float8_e4m3fnuz),  # MI300X
        ("6.2.41133", "gfx941", "cuda:1", torch.float8_e4m3fnuz),
        ("7.0.0", "gfx950", "cuda:0", torch.float8_e4m3fn),  # MI355X: OCP types
        (None, "", "cuda:0", torch.float8_e4m3fn),  # NVIDIA
        ("6.2.41133", "gfx942", "cpu", torch.float8_e4m3fn),
    ],
)
def test_the_fp8_smoke_uses_the_type_the_device_takes(hip, arch, dev, want):
    assert e4m3_dtype(fake_torch(hip, arch), dev) is want


def test_the_fp8_smoke_still_runs_and_checks_its_result_on_the_ocp_type():
    result = fp8_matmul_on(torch, "cpu")
    assert result["ran"] and result["ok"], result


def test_the_perf_fp8_matmul_uses_the_same_rule(monkeypatch):
    monkeypatch.setattr(torch.version, "hip", "6.2.41133", raising=False)
    props = types.SimpleNamespace(gcnArchName="gfx942:sramecc+:xnack-")
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device: props)
    assert matmul.fp8_dtype(torch.device("cuda:0")) is torch.float8_e4m3fnuz


def test_rocm_tf32_variable_is_set_before_torch_starts():
    environ: dict[str, str] = {}
    note = prepare_rocm_tf32(environ, modules={})
    assert environ == {TF32_VARIABLE: "1"} and "before torch started" in note


def test_a_users_own_setting_is_kept():
    environ = {TF32_VARIABLE: "0"}
    note = prepare_rocm_tf32(environ, modules={})
    assert environ == {TF32_VARIABLE: "0"} and "kept" in note


@pytest.fixture
def one_small_shape(monkeypatch):
    quick = Plan(rounds=3, warmup_rounds=1, round_s=0.002)
    monkeypatch.setitem(matmul.PLANS, "cpu", matmul.MatmulPlan(((64, 64, 64),), quick, quick))


def tf32_on_cpu() -> matmul.Measurement:
    cpu = MeasuredDevice("cpu", "cpu", "cpu")
    return matmul.matmul_tflops(cpu, Timer(torch.device("cpu")), "tf32")


def test_tf32_that_did_not_engage_is_named_in_the_figure(one_small_shape):
    """The CPU has no TF32: the result has fp32's precision, and the figure says so."""
    m = tf32_on_cpu()
    assert m.details["tf32_in_effect"] is False
    assert "TF32 was NOT in effect" in m.definition and TF32_VARIABLE in m.definition


def test_a_reduced_precision_result_counts_as_tf32(one_small_shape, monkeypatch):
    """Inputs rounded to fewer mantissa bits, as TF32 tensor cores do: TF32 was in effect."""
    real = matmul.operands

    def rounded(precision, shape, device):
        ops = real(precision, shape, device)
        out = ops.out
        ops.matmul = lambda x, y: out.copy_(x.bfloat16().float() @ y.bfloat16().float())
        return ops

    monkeypatch.setattr(matmul, "operands", rounded)
    m = tf32_on_cpu()
    assert m.details["tf32_in_effect"] is True and "NOT in effect" not in m.definition
