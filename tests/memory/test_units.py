"""Integer bytes with GB and GiB views that never get confused; sizes parsed at the edge."""

from fractions import Fraction

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from rigcheck.memory.errors import ConfigError
from rigcheck.memory.units import GB, GiB, bytes_for_bits, format_bytes, parse_size, to_gb, to_gib

byte_counts = st.integers(0, 2**60)


@given(byte_counts)
@example(80 * GiB)
def test_gib_figure_is_0_9313_times_the_gb_figure(n_bytes: int) -> None:
    assert to_gib(n_bytes) == pytest.approx(to_gb(n_bytes) * GB / GiB)
    assert GB / GiB == pytest.approx(0.9313, abs=1e-4)


def test_format_names_both_units() -> None:
    assert format_bytes(80 * GiB) == "80.00 GiB (85.90 GB)"
    assert format_bytes(80 * GB) == "74.51 GiB (80.00 GB)"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("80GiB", 80 * 2**30),
        ("80GB", 80 * 10**9),
        ("24 GiB", 24 * 2**30),
        ("85899345920", 85_899_345_920),
        ("1.5 TB", 1_500_000_000_000),
        ("0.5gib", 2**29),
        ("512MiB", 2**29),
        ("0", 0),
    ],
)
def test_parse_size(text: str, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["80G", "80 furlongs", "-1GiB", "GiB", "", "1.5", "8e9", "80 G B"])
def test_parse_size_refuses_what_it_cannot_read_unambiguously(text: str) -> None:
    with pytest.raises(ConfigError, match="size"):
        parse_size(text)


@given(st.integers(0, 10**6), st.sampled_from(["B", "KB", "MB", "GB", "KiB", "MiB", "GiB"]))
def test_parse_size_round_trips_whole_units(count: int, unit: str) -> None:
    scale = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": GB, "KiB": 2**10, "MiB": 2**20, "GiB": GiB}
    assert parse_size(f"{count}{unit}") == count * scale[unit]


@given(st.integers(0, 10**12), st.fractions(min_value=0, max_value=64, max_denominator=2**16))
def test_bytes_for_bits_rounds_up_to_whole_bytes(count: int, bits: Fraction) -> None:
    n_bytes = bytes_for_bits(count, bits)
    assert isinstance(n_bytes, int)
    assert n_bytes * 8 >= count * bits > (n_bytes - 1) * 8
