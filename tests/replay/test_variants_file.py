"""load_variants() outside a clone: a missing variants file is a VariantError that says where
the default lives and what to pass, not a bare FileNotFoundError (an installed wheel has no
fixtures/)."""

from __future__ import annotations

import pytest

from rigcheck.testing import variants


def test_the_clone_default_loads():
    assert variants.load_variants()


def test_a_missing_file_says_what_to_pass(tmp_path):
    missing = tmp_path / "fixtures" / "broken_variants.json"
    with pytest.raises(variants.VariantError, match=r"not with its wheel: pass your own file"):
        variants.load_variants(missing)
