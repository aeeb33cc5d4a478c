"""The torch probe's smoke kernels, run on the CPU: what they record, across torch versions."""

import torch

from rigcheck.facts.host.torch_probe import fp8_matmul_on


class TorchBefore24:
    """torch 2.1 to 2.3, where torch._scaled_mm returns (out, amax)."""

    def __getattr__(self, name):
        return getattr(torch, name)

    def _scaled_mm(self, *args, **kwargs):
        return torch._scaled_mm(*args, **kwargs), torch.tensor(0.0)


def test_fp8_matmul_is_right():
    result = fp8_matmul_on(torch, "cpu")
    assert result["ran"] and result["ok"], result


def test_fp8_matmul_reads_the_older_torch_tuple():
    result = fp8_matmul_on(TorchBefore24(), "cpu")
    assert result["ran"] and result["ok"], result
