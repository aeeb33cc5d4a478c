"""Every size unit rigcheck reads, member by member: powers of ten for B, KB, MB, GB, TB
(SI) and powers of two for KiB, MiB, GiB, TiB (IEC 80000-13); a GB is never a GiB."""

import pytest

from rigcheck.memory.errors import ConfigError
from rigcheck.memory.units import format_bytes, parse_size, to_gb, to_gib

SI = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}
IEC = {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}


@pytest.mark.parametrize(("unit", "size"), [*SI.items(), *IEC.items()])
def test_each_unit_is_its_standard_size(unit, size):
    assert parse_size(f"1{unit}") == size
    assert parse_size(f"3 {unit.lower()}") == 3 * size
    assert parse_size(f"1.5{unit.upper()}") == parse_size(f"1.5{unit}")


def test_gb_and_gib_and_tb_and_tib_differ():
    assert parse_size("80GB") == 80_000_000_000 < parse_size("80GiB") == 85_899_345_920
    assert parse_size("1TB") == 10**12 < parse_size("1TiB") == 1_099_511_627_776
    assert (to_gb(2**30), to_gib(10**9)) == (1.073741824, 10**9 / 2**30)
    assert format_bytes(80 * 2**30) == "80.00 GiB (85.90 GB)"


@pytest.mark.parametrize("text", ["80 GiBs", "1 PB", "TB", "-1GB", "1e9"])
def test_anything_else_is_refused_with_the_units_it_knows(text):
    with pytest.raises(ConfigError, match="KiB, MiB, GiB, TiB for powers of 2"):
        parse_size(text)
