"""NF4 weights as bitsandbytes stores them on CPU, against the exact bits per parameter."""

import pytest

from rigcheck.memory.quantization import nf4_bits
from rigcheck.memory.units import bytes_for_bits

torch = pytest.importorskip("torch")
bnb_functional = pytest.importorskip("bitsandbytes.functional")


@pytest.mark.parametrize("shape", [(1024, 512), (256, 64 * 256), (4096, 64)])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_nf4_is_4_5_bits_per_param(shape, dtype) -> None:
    """Packed 4-bit codes + one fp32 absmax per block of 64; the 16-entry NF4 code is shared."""
    packed, state = bnb_functional.quantize_4bit(
        torch.randn(shape, dtype=dtype), blocksize=64, quant_type="nf4", compress_statistics=False
    )
    n = shape[0] * shape[1]
    assert packed.nbytes + state.absmax.nbytes == bytes_for_bits(n, nf4_bits(False)) == n * 9 // 16


@pytest.mark.parametrize("shape", [(1024, 1024), (64 * 256, 64)])
def test_nf4_double_quant_is_4_127_bits_per_param(shape) -> None:
    """Absmaxes in uint8, in blocks of 256 with an fp32 absmax each: 4 + 8/64 + 32/(64*256) bits,
    exact for whole blocks. Per tensor one fp32 offset (4 B) and the shared 256-entry code table
    come on top; they do not grow with the tensor."""
    packed, state = bnb_functional.quantize_4bit(
        torch.randn(shape, dtype=torch.bfloat16), blocksize=64, quant_type="nf4",
        compress_statistics=True,
    )  # fmt: skip
    n = shape[0] * shape[1]
    measured = packed.nbytes + state.absmax.nbytes + state.state2.absmax.nbytes
    assert measured == bytes_for_bits(n, nf4_bits(True))
    assert state.offset.nbytes == 4
