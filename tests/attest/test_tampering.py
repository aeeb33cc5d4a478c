"""Any single field changed after signing is caught: in certificate.json (which the renter
reads), in the signed statement (the envelope's payload), or in the node the renter reads back.
Each change is drawn by hypothesis; the unchanged certificate is accepted, so each refusal is
the change's doing."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import pytest
from attest_inputs import NONCE
from hypothesis import given
from hypothesis import strategies as st

from rigcheck.attest.finding import REFUSED, exit_code
from rigcheck.attest.verify import verify_certificate


def refusals(certificate, envelope, key, nonce=NONCE, node=None) -> list[str]:
    findings = verify_certificate(certificate, envelope, key.public, nonce, node=node)
    assert exit_code(findings) == 3 or not [f for f in findings if f.level == REFUSED]
    return [f.text for f in findings if f.level == REFUSED]


def leaves(node: Any, path: tuple = ()) -> list[tuple]:
    """The path of every scalar in a JSON document."""
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in leaves(v, (*path, k))]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in leaves(v, (*path, i))]
    return [path]


def get(doc: Any, path: tuple) -> Any:
    for part in path:
        doc = doc[part]
    return doc


def put(doc: Any, path: tuple, value: Any) -> None:
    get(doc, path[:-1])[path[-1]] = value


def other_value(draw, old: Any) -> Any:
    """A value of the same JSON type that differs from `old`."""
    if isinstance(old, bool):
        return not old
    if isinstance(old, int):
        return draw(st.integers(-(2**40), 2**40).filter(lambda v: v != old))
    if isinstance(old, float):
        new = draw(st.floats(allow_nan=False, allow_infinity=False).filter(lambda v: v != old))
        return new
    if isinstance(old, str):
        return draw(st.text(max_size=40).filter(lambda v: v != old))
    return draw(st.text(min_size=1, max_size=10))  # None: now a value


def test_the_certificate_as_signed_is_accepted(signed_once, key, node):
    certificate, envelope = copy.deepcopy(signed_once)  # each example its own
    findings = verify_certificate(certificate, envelope, key.public, NONCE, node=node)
    assert exit_code(findings) == 0, [f.line() for f in findings]


@given(data=st.data())
def test_any_field_of_the_certificate_changed_is_refused(signed_once, key, data):
    certificate, envelope = copy.deepcopy(signed_once)  # each example its own
    path = data.draw(st.sampled_from(leaves(certificate)), label="path")
    put(certificate, path, other_value(data.draw, get(certificate, path)))
    assert any("certificate.json: changed since it was signed" in r for r in
               refusals(certificate, envelope, key))  # fmt: skip


def _outcome_paths(certificate) -> list[tuple]:
    return [("checks", i, "outcome") for i in range(len(certificate["checks"]))]


@given(data=st.data())
def test_a_checks_outcome_changed_is_named(signed_once, key, data):
    certificate, envelope = copy.deepcopy(signed_once)  # each example its own
    i = data.draw(st.integers(0, len(certificate["checks"]) - 1), label="check")
    check = certificate["checks"][i]
    check["outcome"] = data.draw(st.sampled_from(["pass", "warn", "fail", "skip", "xfail"])
                                 .filter(lambda o: o != check["outcome"]))  # fmt: skip
    found = refusals(certificate, envelope, key)
    assert any(f"[{check['id']}].outcome: signed" in r for r in found), found


@given(data=st.data())
def test_a_figure_changed_is_named(signed_once, key, data):
    certificate, envelope = copy.deepcopy(signed_once)  # each example its own
    measured = [c for c in certificate["checks"] if c["figures"]]
    check = data.draw(st.sampled_from(measured), label="check")
    figure = check["figures"][0]
    figure["measured"] = other_value(data.draw, figure["measured"])
    found = refusals(certificate, envelope, key)
    assert any(f"[{check['id']}].figures[0].measured: signed" in r for r in found), found


@given(data=st.data())
def test_a_serial_changed_in_the_certificate_is_refused(signed_once, key, data):
    certificate, envelope = copy.deepcopy(signed_once)  # each example its own
    device = certificate["machine"]["devices"][0]
    field = data.draw(st.sampled_from(["serial", "uuid"]))
    device[field] = other_value(data.draw, device[field])
    found = refusals(certificate, envelope, key)
    assert any("the facts snapshot in certificate.json: changed" in r for r in found), found
    assert any(f"secrets_shown.{field}: signed" in r for r in found), found


@given(data=st.data())
def test_a_serial_not_the_nodes_is_refused(signed_once, key, node, data):
    """The renter reads the node's full serials (NVML); one that differs is not the certified."""
    certificate, envelope = copy.deepcopy(signed_once)  # each example its own
    read = json.loads(json.dumps(node))
    field = data.draw(st.sampled_from(["serial", "uuid"]))
    device = read["devices"][0]
    device[field] = other_value(data.draw, device[field])
    found = refusals(certificate, envelope, key, node=read)
    assert any(f"{field} not the certified one" in r for r in found), found


def _statement(envelope) -> dict:
    return json.loads(base64.b64decode(envelope["payload"]))


def _repacked(envelope, statement) -> dict:
    """The envelope with a changed statement and the old signature: what a forger can make
    without the provider's private key."""
    body = json.dumps(statement, sort_keys=True, separators=(",", ":")).encode()
    return {**envelope, "payload": base64.b64encode(body).decode()}


SIGNED_FIELDS = {
    "spec hash": ("predicate", "spec_sha256"),
    "nonce": ("predicate", "challenge", "nonce_sha256"),
    "salt": ("predicate", "challenge", "salt"),
    "time": ("predicate", "attested_at"),
    "run time": ("predicate", "run", "started_at"),
    "certificate digest": ("subject", 0, "digest", "sha256"),
    "facts digest": ("subject", 1, "digest", "sha256"),
}


@pytest.mark.parametrize("field", SIGNED_FIELDS)
@given(data=st.data())
def test_a_signed_field_changed_breaks_the_signature(signed_once, key, field, data):
    certificate, envelope = copy.deepcopy(signed_once)  # each example its own
    statement = _statement(envelope)
    path = SIGNED_FIELDS[field]
    put(statement, path, other_value(data.draw, get(statement, path)))
    found = refusals(certificate, _repacked(envelope, statement), key)
    assert found and found[0].startswith("signature: no signature by key"), found


@given(data=st.data())
def test_any_field_of_the_statement_changed_breaks_the_signature(signed_once, key, data):
    certificate, envelope = copy.deepcopy(signed_once)  # each example its own
    statement = _statement(envelope)
    path = data.draw(st.sampled_from(leaves(statement)), label="path")
    put(statement, path, other_value(data.draw, get(statement, path)))
    found = refusals(certificate, _repacked(envelope, statement), key)
    assert found and found[0].startswith("signature: no signature by key"), found


def test_a_statement_resigned_by_another_key_is_refused(signed_once, key):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from rigcheck.attest.envelope import sign_envelope
    from rigcheck.attest.keys import KeyPair

    certificate, envelope = copy.deepcopy(signed_once)  # each example its own
    statement = _statement(envelope)
    statement["predicate"]["spec_sha256"] = "0" * 64
    forger = Ed25519PrivateKey.generate()
    forged = sign_envelope(statement, KeyPair(forger, forger.public_key()))
    found = refusals(certificate, forged, key)
    assert found and found[0].startswith("signature: no signature by key"), found


@given(nonce=st.text(min_size=1, max_size=64).filter(lambda n: n != NONCE))
def test_a_replayed_nonce_is_refused(signed_once, key, nonce):
    """The renter's fresh challenge against a certificate made for another (an old one)."""
    certificate, envelope = copy.deepcopy(signed_once)  # each example its own
    found = refusals(certificate, envelope, key, nonce=nonce)
    assert found == [
        "nonce: this certificate answers another challenge, not yours (an old certificate "
        "replayed, or one made for someone else): ask for a run attested with your --nonce"
    ]


def test_a_validly_signed_statement_of_another_kind_is_refused(signed_once, key):
    from rigcheck.attest.envelope import sign_envelope

    certificate, _ = copy.deepcopy(signed_once)
    other = {"_type": "https://in-toto.io/Statement/v1", "subject": [],
             "predicateType": "https://slsa.dev/provenance/v1", "predicate": {}}  # fmt: skip
    found = refusals(certificate, sign_envelope(other, key), key)
    assert len(found) == 1 and found[0].startswith("signed, but not a rigcheck certificate")


@pytest.mark.parametrize("issued, refused", [(-1, False), (0, False), (1, True)])
def test_a_run_older_than_the_challenge_is_refused(signed_once, key, issued, refused):
    """--not-before: the nonce is bound at signing, so an older run signed for it is caught by
    its signed start time (seconds around it)."""
    import datetime as dt

    from rigcheck.attest.verify import parse_moment

    certificate, envelope = copy.deepcopy(signed_once)
    started = parse_moment(certificate["run"]["started_at"])
    not_before = started + dt.timedelta(seconds=issued)
    findings = verify_certificate(certificate, envelope, key.public, NONCE,
                                  not_before=not_before)  # fmt: skip
    older = [f.text for f in findings if f.level == REFUSED]
    assert bool(older) is refused, older
    assert exit_code(findings) == (3 if refused else 0)
