"""Apple silicon: MPS built and working, and the behaviours the seed documents warn about."""

import pytest

from rigcheck.require import fact, needs_backend

pytestmark = pytest.mark.facts


@pytest.fixture(autouse=True)
def _apple_only(spec):
    needs_backend(spec, "mps")


def test_mps_built(facts):
    assert fact(facts, "software.torch.mps_built") is True, (
        "this torch was built without MPS: install the macOS arm64 wheel of torch"
    )


def test_mps_available(facts):
    assert fact(facts, "software.torch.mps_available") is True, (
        "MPS is built but not available: needs macOS 12.3+ on Apple silicon, and a native "
        "arm64 Python (not one running under Rosetta)"
    )


def test_mps_roundtrip(facts):
    ok = fact(facts, "smoke.mps.roundtrip.ok")
    assert ok is True, (
        f"a tensor sent to MPS and back came back wrong: {facts.find('smoke.mps.roundtrip')}"
    )


def test_mps_float64_is_refused_cleanly(facts):
    """MPS has no float64: torch must refuse it, not silently compute something else."""
    behaviour = fact(facts, "smoke.mps.float64.behaviour")
    assert behaviour in {"rejected", "supported"}, (
        f"float64 on MPS gave a wrong result instead of an error: {facts.find('smoke.mps.float64')}"
    )


def test_mps_autocast_fp16(facts):
    ok = fact(facts, "smoke.mps.autocast_fp16.ok")
    assert ok is True, (
        'torch.autocast("mps", dtype=torch.float16) did not produce fp16: '
        f"{facts.find('smoke.mps.autocast_fp16')}"
    )
