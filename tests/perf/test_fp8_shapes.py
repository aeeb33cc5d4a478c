"""The fp8 floor is 0.8 x mamf-finder's best over a sweep reaching large K; the suite swept
only up to K = 8192, ~1% above the floor on a healthy H200 (issue 10). fp8 now also sweeps
K = 16384 on GPUs, and the judged shape is the fastest of them."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from rigcheck.measure import matmul  # noqa: E402
from rigcheck.measure.device import MeasuredDevice  # noqa: E402
from rigcheck.measure.timing import Plan, Timer  # noqa: E402


@pytest.mark.parametrize("backend", ["cuda", "rocm"])
def test_gpu_fp8_sweeps_past_k_8192(backend):
    assert max(k for _, _, k in matmul.shapes_for(backend, "fp8")) == 16384
    assert max(k for _, _, k in matmul.shapes_for(backend, "bf16")) == 8192  # unchanged


def test_the_extra_shape_is_swept_and_the_judged_shape_recorded(monkeypatch):
    """On the CPU with small shapes: the extra large-K shape is swept and can be chosen."""
    quick = Plan(rounds=2, warmup_rounds=1, round_s=0.002)
    monkeypatch.setitem(matmul.PLANS, "cpu", matmul.MatmulPlan(((32, 32, 32),), quick, quick))
    monkeypatch.setitem(matmul.EXTRA_SHAPES, ("cpu", "fp8"), ((64, 64, 256),))
    m = matmul.matmul_tflops(MeasuredDevice("cpu", "cpu", "cpu"), Timer(torch.device("cpu")), "fp8")
    assert set(m.details["sweep_tflops"]) == {"32x32x32", "64x64x256"}
    # The judged shape is one of the swept ones (the fastest; CPU rates are too close to
    # compare after the 3-decimal rounding of sweep_tflops).
    assert "x".join(map(str, m.details["shape"])) in m.details["sweep_tflops"]
