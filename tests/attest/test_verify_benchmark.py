"""How long a renter waits for `verify` on a signed certificate, as a benchmark (not a timed
test): pytest-benchmark prints min/median/max of the in-process verification (signature, nonce,
certificate and facts digests, every bound field, the node's serials, and a re-judge against the
spec), without the interpreter's start. What the test asserts is the answer: accepted."""

from __future__ import annotations

from attest_inputs import NONCE, SPEC

from rigcheck.attest.finding import exit_code
from rigcheck.attest.verify import verify_certificate
from rigcheck.spec import load_spec_file


def test_verify_wall_time(benchmark, signed_once, key, node):
    certificate, envelope = signed_once  # verify reads them, never changes them
    spec = load_spec_file(SPEC)
    findings = benchmark(verify_certificate, certificate, envelope, key.public, NONCE, spec, node)
    assert exit_code(findings) == 0, [f.line() for f in findings]
