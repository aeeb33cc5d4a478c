"""Bits per parameter of stored weights, as exact fractions.

NF4 (QLoRA, Dettmers et al. 2023, section 3): 4-bit codes in blocks of 64, one fp32 absmax per
block: 4 + 32/64 = 4.5 bits. With double quantization the absmaxes are themselves 8-bit in blocks
of 256 with an fp32 constant each: 4 + 8/64 + 32/(64*256) bits. transformers' BitsAndBytesConfig
defaults to no double quantization (bnb_4bit_use_double_quant=False).
"""

from fractions import Fraction

WEIGHT_BITS: dict[str, Fraction] = {
    "fp32": Fraction(32),
    "bf16": Fraction(16),
    "fp16": Fraction(16),
    "int8": Fraction(8),
    "nf4": 4 + Fraction(32, 64),
    "nf4-dq": 4 + Fraction(8, 64) + Fraction(32, 64 * 256),
}


def nf4_bits(double_quant: bool) -> Fraction:
    """Bits per parameter of NF4 weights, with or without double quantization."""
    return WEIGHT_BITS["nf4-dq" if double_quant else "nf4"]
