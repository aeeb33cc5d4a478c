"""Where torch's own behaviour decides a figure, the test asks torch, not a belief about it.

_scaled_mm: the fp8 matmul's operands (rigcheck/measure/matmul.py operands) must be laid out as
torch's CUDA kernel requires: self row-major, mat2 column-major, sizes divisible by 16. The
CPU build accepts any layout, so the check is torch's own CUDA rule: _check_scaled_mm_sizes in
torch/_meta_registrations.py (the "mat2 must be col_major" checks for device_hint == "cuda"),
run on rigcheck's real operands with the device they report made "cuda".
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
rules = pytest.importorskip("torch._meta_registrations")

from rigcheck.measure import matmul  # noqa: E402


class OnCuda:
    """A CPU tensor that tells torch's rule function it lives on a CUDA device."""

    device = torch.device("cuda")

    def __init__(self, tensor):
        self.tensor = tensor

    def __getattr__(self, name):
        return getattr(self.tensor, name)


def check_on_cuda(a, b, monkeypatch):
    """torch's CUDA shape and layout rule for _scaled_mm(a, b); its last line allocates the
    output on the device, which a CPU build cannot, so that allocation is stood in for."""
    if not hasattr(rules, "_check_scaled_mm_sizes"):
        pytest.skip("this torch has no _check_scaled_mm_sizes to ask")
    monkeypatch.setattr(torch, "empty", lambda *size, **kw: ("output", size, kw["dtype"]))
    one = OnCuda(torch.ones((), dtype=torch.float32))
    return rules._check_scaled_mm_sizes(OnCuda(a), OnCuda(b), one, one, out_dtype=torch.bfloat16)


def test_rigchecks_fp8_operands_have_the_layout_cuda_requires(monkeypatch):
    ops = matmul.operands("fp8", (64, 48, 32), "cpu")
    assert check_on_cuda(ops.a[0], ops.b[0], monkeypatch) == ("output", (64, 48), torch.bfloat16)


def test_the_rule_refuses_a_row_major_mat2(monkeypatch):
    """The same rule fails the layout rigcheck would get without the transpose."""
    ops = matmul.operands("fp8", (64, 48, 32), "cpu")
    with pytest.raises(RuntimeError, match="mat2 must be col_major"):
        check_on_cuda(ops.a[0], ops.b[0].contiguous(), monkeypatch)
