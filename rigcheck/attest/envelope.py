"""DSSE (github.com/secure-systems-lab/dsse): a payload, its type, and Ed25519 signatures over
the pre-authentication encoding of both, so a signature cannot be moved to another payload type.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from rigcheck.attest.canonical import canonical_json
from rigcheck.attest.keys import KeyPair, PublicKey, key_id

PAYLOAD_TYPE = "application/vnd.in-toto+json"


def pae(payload_type: str, body: bytes) -> bytes:
    """PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body (protocol.md)."""
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(body), body)


def sign_envelope(statement: dict[str, Any], key: KeyPair) -> dict[str, Any]:
    body = canonical_json(statement)
    signature = key.private.sign(pae(PAYLOAD_TYPE, body))
    return {
        "payloadType": PAYLOAD_TYPE,
        "payload": base64.b64encode(body).decode("ascii"),
        "signatures": [
            {"keyid": key_id(key.public), "sig": base64.b64encode(signature).decode("ascii")}
        ],
    }


def open_envelope(envelope: Any, public: PublicKey) -> tuple[dict[str, Any] | None, str]:
    """(the statement, how it was checked) when a signature by `public` holds, else (None, why)."""
    from cryptography.exceptions import InvalidSignature

    if not isinstance(envelope, dict) or not isinstance(envelope.get("signatures"), list):
        return None, "not a DSSE envelope (payload, payloadType, signatures)"
    if envelope.get("payloadType") != PAYLOAD_TYPE:
        return None, f"payloadType is {envelope.get('payloadType')!r}, not {PAYLOAD_TYPE}"
    body = _decoded(envelope.get("payload"))
    if body is None:
        return None, "the payload is not base64"
    wanted = key_id(public)
    for entry in envelope["signatures"]:
        signature = _decoded(entry.get("sig")) if isinstance(entry, dict) else None
        if signature is None:
            continue
        try:
            public.verify(signature, pae(PAYLOAD_TYPE, body))
        except InvalidSignature:
            continue
        statement = _statement(body)
        if statement is None:
            return None, "the signed payload is not a JSON object"
        return statement, f"Ed25519 signature by key {wanted[:16]}"
    ids = ", ".join(
        str(e.get("keyid", "?"))[:16] for e in envelope["signatures"] if isinstance(e, dict)
    )
    return None, (
        f"no signature by key {wanted[:16]} holds (signed by: {ids or 'nobody'}): the "
        "statement was changed after signing, or signed by another key"
    )


def _decoded(text: Any) -> bytes | None:
    """DSSE allows standard and URL-safe base64; a verifier must take both."""
    if not isinstance(text, str):
        return None
    try:
        return base64.b64decode(text.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        return None


def _statement(body: bytes) -> dict[str, Any] | None:
    try:
        statement = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return statement if isinstance(statement, dict) else None
