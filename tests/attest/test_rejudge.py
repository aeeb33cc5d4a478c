"""A renter's stricter spec, applied offline to a provider's passing certificate, names each
figure that falls short with the numbers; the provider's own spec finds nothing."""

from __future__ import annotations

import copy
import json

import pytest
from attest_inputs import NONCE, SPEC

from rigcheck.attest.finding import NOTE, SHORT, exit_code
from rigcheck.attest.verify import verify_certificate
from rigcheck.spec import load_spec_file


def renter_spec(tmp_path, floors: dict[str, float]):
    """expected/h100.json with higher floors (achievable raised to them where it was lower)."""
    data = json.loads(SPEC.read_text())
    for key, floor in floors.items():
        figure = data["figures"][key]
        figure["floor"] = {"value": floor, "source": "the renter's own floor"}
        if figure["achievable"] and figure["achievable"]["value"] < floor:
            figure["achievable"] = {"value": floor, "source": "the renter's own figure"}
    path = tmp_path / "h100.json"  # a spec file is named for its class
    path.write_text(json.dumps(data))
    return load_spec_file(path)


def test_a_stricter_spec_names_the_figures_that_fall_short(signed_once, key, tmp_path):
    certificate, envelope = copy.deepcopy(signed_once)
    spec = renter_spec(tmp_path, {"matmul_bf16_tflops": 800.0, "device_copy_gbps": 3100.0})
    findings = verify_certificate(certificate, envelope, key.public, NONCE, spec)
    short = [f.text for f in findings if f.level == SHORT]
    assert short == [
        "matmul_bf16_tflops (gpu0): falls short of your spec: below the floor: measured 794.5 "
        "TFLOP/s (floor 800.0, achievable 800.0, datasheet 989.5, 80% of datasheet)",
        "device_copy_gbps (gpu0): falls short of your spec: below the floor: measured 3,000.0 "
        "GB/s (floor 3,100.0, achievable unknown, datasheet 3,350.0, 90% of datasheet)",
    ]
    assert exit_code(findings) == 1
    assert any(f.level == NOTE and "not the spec the run was judged against" in f.text
               for f in findings)  # fmt: skip


def test_the_providers_own_spec_finds_nothing_short(signed_once, key):
    certificate, envelope = copy.deepcopy(signed_once)
    findings = verify_certificate(certificate, envelope, key.public, NONCE, load_spec_file(SPEC))
    assert exit_code(findings) == 0, [f.line() for f in findings]
    texts = [f.text for f in findings]
    assert f"spec: {SPEC} is the very spec the run was judged against" in texts
    assert f"re-judged 3 signed figures against {SPEC}" in texts


@pytest.mark.parametrize("floor, short", [(794.5, False), (794.6, True)])
def test_the_floor_is_judged_as_the_suite_judges_it(signed_once, key, tmp_path, floor, short):
    """At the floor passes, a hair above it does not: rigcheck's own judge, not a copy."""
    certificate, envelope = copy.deepcopy(signed_once)
    spec = renter_spec(tmp_path, {"matmul_bf16_tflops": floor})
    findings = verify_certificate(certificate, envelope, key.public, NONCE, spec)
    named = [f for f in findings if f.level == SHORT and "matmul_bf16_tflops" in f.text]
    assert bool(named) is short


def test_a_spec_of_another_class_judges_nothing(signed_once, key):
    from rigcheck.layout import SPEC_DIR

    certificate, envelope = copy.deepcopy(signed_once)
    spec = load_spec_file(SPEC_DIR / "a100.json")
    findings = verify_certificate(certificate, envelope, key.public, NONCE, spec)
    assert [f.text for f in findings if f.level == SHORT] == [
        "your spec is of class a100, the certificate of h100"
    ]
