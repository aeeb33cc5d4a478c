"""Byte counts and their two human views: GB (10^9 bytes) and GiB (2^30 bytes).

Everything in rigcheck.memory is an integer number of bytes; GB and GiB exist only at the edge,
for people, and always carry their unit so the two are never confused.
"""

import re
from fractions import Fraction

from rigcheck.memory.errors import ConfigError

GB = 10**9
GiB = 2**30

_UNITS = {
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": GB,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": GiB,
    "tib": 2**40,
}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$", re.ASCII)  # not '８0GiB'


def ceil_div(numerator: int, denominator: int) -> int:
    """Integer ceiling of numerator / denominator, for non-negative integers."""
    return -(-numerator // denominator)


def bytes_for_bits(count: int, bits_per_element: Fraction | int) -> int:
    """Bytes to hold `count` elements of `bits_per_element` bits each, rounded up to whole bytes."""
    total_bits = Fraction(bits_per_element) * count
    return ceil_div(total_bits.numerator, total_bits.denominator * 8)


def to_gb(n_bytes: int) -> float:
    """The byte count in GB (10^9 bytes)."""
    return n_bytes / GB


def to_gib(n_bytes: int) -> float:
    """The byte count in GiB (2^30 bytes)."""
    return n_bytes / GiB


def format_bytes(n_bytes: int) -> str:
    """Both views, unit always written: '12.55 GiB (13.48 GB)'."""
    return f"{to_gib(n_bytes):.2f} GiB ({to_gb(n_bytes):.2f} GB)"


def parse_size(text: str) -> int:
    """Parse '80GiB', '80GB', '24 GiB', '1.5 TB' or a plain byte count into integer bytes.

    Fractional results are rounded down to whole bytes. A bare 'G' or 'M' is refused: it is
    exactly the GB/GiB ambiguity this module exists to prevent.
    """
    match = _SIZE.match(str(text))
    unit = match.group(2).lower() if match else ""
    if not match or (unit and unit not in _UNITS):
        raise ConfigError(
            f"{text!r} is not a size: use a byte count or a number with a unit "
            "(B, KB, MB, GB, TB for powers of 10; KiB, MiB, GiB, TiB for powers of 2), e.g. 80GiB"
        )
    value = Fraction(match.group(1)) * _UNITS[unit or "b"]
    if not unit and value.denominator != 1:
        raise ConfigError(f"{text!r}: a size without a unit is a whole number of bytes")
    return int(value)
