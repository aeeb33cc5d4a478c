"""Apple silicon: MPS built and working, and the behaviours the seed documents warn about."""

import pytest

from rigcheck.require import needs_backend, require

pytestmark = pytest.mark.facts


@pytest.fixture(autouse=True)
def _apple_only(spec):
    needs_backend(spec, "mps")


def test_mps_built(facts):
    assert require(facts, "software.torch.mps_built"), (
        "this torch was built without MPS: install the macOS arm64 wheel of torch"
    )


def test_mps_available(facts):
    assert require(facts, "software.torch.mps_available"), (
        "MPS is built but not available: needs macOS 12.3+ on Apple silicon, and a native "
        "arm64 Python (not one running under Rosetta)"
    )


def test_mps_roundtrip(facts):
    result = require(facts, "smoke.mps.roundtrip")
    assert result.get("ok"), f"a tensor sent to MPS and back came back wrong: {result}"


def test_mps_float64_is_refused_cleanly(facts):
    """MPS has no float64: torch must refuse it, not silently compute something else."""
    result = require(facts, "smoke.mps.float64")
    assert result["behaviour"] in {"rejected", "supported"}, (
        f"float64 on MPS gave a wrong result instead of an error: {result}"
    )


def test_mps_autocast_fp16(facts):
    result = require(facts, "smoke.mps.autocast_fp16")
    assert result.get("ok"), (
        f'torch.autocast("mps", dtype=torch.float16) did not produce fp16: {result}'
    )
