"""The envelope is standard DSSE: its pre-authentication encoding is the spec's own test
vector, and a verifier takes both base64 alphabets, as the protocol requires."""

from __future__ import annotations

import base64

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from rigcheck.attest.canonical import canonical_json
from rigcheck.attest.envelope import PAYLOAD_TYPE, open_envelope, pae, sign_envelope
from rigcheck.attest.keys import KeyPair


def test_pae_is_the_dsse_test_vector():
    # secure-systems-lab/dsse, protocol.md, "Test Vectors"
    assert pae("http://example.com/HelloWorld", b"hello world") == (
        b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    )


def test_canonical_json_sorts_keys_and_refuses_what_json_cannot_hold():
    assert canonical_json({"b": 1, "a": [2.5, "é"]}) == '{"a":[2.5,"é"],"b":1}'.encode()
    with pytest.raises(ValueError):
        canonical_json({"measured": float("nan")})


def _key() -> KeyPair:
    private = Ed25519PrivateKey.generate()
    return KeyPair(private, private.public_key())


def test_a_url_safe_signature_verifies_and_the_payload_type_is_in_toto():
    key = _key()
    statement = {"_type": "https://in-toto.io/Statement/v1", "n": "?>?>"}
    envelope = sign_envelope(statement, key)
    assert envelope["payloadType"] == PAYLOAD_TYPE == "application/vnd.in-toto+json"
    url_safe = {
        **envelope,
        "payload": base64.urlsafe_b64encode(base64.b64decode(envelope["payload"])).decode(),
    }
    assert open_envelope(url_safe, key.public)[0] == statement


def test_another_payload_type_is_refused_before_any_signature_is_tried():
    key = _key()
    envelope = {**sign_envelope({"a": 1}, key), "payloadType": "application/json"}
    statement, why = open_envelope(envelope, key.public)
    assert statement is None
    assert why == "payloadType is 'application/json', not application/vnd.in-toto+json"
