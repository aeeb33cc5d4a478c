"""Weights of pre-quantized checkpoints (quantization_config in config.json), tensor by tensor.

Only the decoder-layer matrices (and routed experts) are quantized; embeddings, lm_head, norms and
biases stay in the checkpoint's 16-bit dtype. Per matrix of d_out x d_in:
- gptq (vLLM GPTQLinearMethod.create_weights, vllm/model_executor/layers/quantization/gptq.py):
  qweight int32 (d_in x bits / 32, d_out), qzeros int32 (groups, d_out x bits / 32), scales
  16-bit (groups, d_out), g_idx int32 (d_in); groups = d_in / group_size (one when -1).
- awq (vLLM AWQLinearMethod.create_weights, quantization/awq.py): qweight int32
  (d_in, d_out x bits / 32), qzeros int32 (groups, d_out x bits / 32), scales 16-bit
  (groups, d_out).
- fp8 (transformers 5.23 FineGrainedFP8Config, integrations/finegrained_fp8.py FP8Linear): the
  weight in float8 (1 byte) and an fp32 weight_scale_inv per weight_block_size block
  (ceil(d_out / 128) x ceil(d_in / 128) for DeepSeek-V3's [128, 128]), or one fp32 scale per
  matrix without blocks. Pinned against transformers' own FP8 modules in
  tests/memory/test_checkpoint_formats.py.
"""

from dataclasses import dataclass

from rigcheck.memory.architecture import TensorGroup
from rigcheck.memory.errors import ConfigError
from rigcheck.memory.units import ceil_div

FORMATS = ("gptq", "awq", "fp8")
QUANTIZED_ROLES = ("linear", "expert")


@dataclass(frozen=True)
class CheckpointFormat:
    """How a pre-quantized checkpoint stores its layer matrices."""

    method: str  # gptq, awq, fp8
    bits: int = 8
    group_size: int = 0  # gptq/awq: inputs per scale (-1: one group); fp8: block edge, 0: none

    def __post_init__(self) -> None:
        if self.method not in FORMATS:
            raise ConfigError(f"quantization_config: quant_method {self.method!r} is not "
                              f"supported; known: {', '.join(FORMATS)}")  # fmt: skip
        if self.method != "fp8" and self.bits not in (2, 3, 4, 8):
            raise ConfigError(f"quantization_config: {self.method} bits must be 2, 3, 4 or 8")


def _int32s(n_values: int, bits: int) -> int:
    """Bytes of int32 words packing n_values of `bits` bits."""
    return 4 * ceil_div(n_values * bits, 32)


def matrix_bytes(fmt: CheckpointFormat, d_out: int, d_in: int, scale_bytes: int = 2) -> int:
    """Bytes one quantized d_out x d_in matrix takes, with everything it needs to dequantize."""
    if fmt.method == "fp8":
        if fmt.group_size:
            scales = ceil_div(d_out, fmt.group_size) * ceil_div(d_in, fmt.group_size)
        else:
            scales = 1
        return d_out * d_in + 4 * scales
    groups = 1 if fmt.group_size <= 0 else ceil_div(d_in, fmt.group_size)
    zeros = groups * _int32s(d_out, fmt.bits)
    scales = scale_bytes * groups * d_out
    if fmt.method == "gptq":
        return _int32s(d_in, fmt.bits) * d_out + zeros + scales + 4 * d_in
    return d_in * _int32s(d_out, fmt.bits) + zeros + scales


def weights_bytes(groups: tuple[TensorGroup, ...], fmt: CheckpointFormat, other_bytes: int) -> int:
    """All weights: quantized layer matrices, the rest at other_bytes per parameter."""
    total = 0
    for g in groups:
        if g.role in QUANTIZED_ROLES and len(g.shape) == 2:
            total += g.count * matrix_bytes(fmt, *g.shape)
        else:
            total += g.total * other_bytes
    return total


def from_quantization_config(config: dict) -> CheckpointFormat:
    """The format a config.json's quantization_config describes; a ConfigError otherwise."""
    if not isinstance(config, dict):
        raise ConfigError("quantization_config must be a JSON object")
    method = str(config.get("quant_method", "")).lower()
    if method == "fp8":
        block = config.get("weight_block_size") or [0, 0]
        if block[0] != block[-1]:
            raise ConfigError("quantization_config: only square fp8 weight blocks are modelled")
        return CheckpointFormat("fp8", 8, int(block[0]))
    bits = config.get("bits") or config.get("w_bit") or 4
    group = config.get("group_size") or config.get("q_group_size") or -1
    return CheckpointFormat(method, int(bits), int(group))
