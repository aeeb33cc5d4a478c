"""The in-toto Statement a certificate is signed as: the certificate and its facts as subjects,
and a predicate of what the run found. Every field verify can derive again from certificate.json
comes from `certified()`, so signer and verifier cannot disagree on what is bound."""

from __future__ import annotations

from typing import Any

from rigcheck.attest.canonical import sha256_of
from rigcheck.attest.identity import bus_id, node_identity, nonce_digest, secret_digests
from rigcheck.gate.tiers import tier_of

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "urn:rigcheck:acceptance-certificate:v1"  # docs/attest.md describes it
CERTIFICATE, FACTS = "certificate.json", "certificate.json#/machine"
RUN_KEYS = ("id", "started_at", "finished_at")
VERDICT_KEYS = ("verdict", "partial", "exit_status")
FIGURE_KEYS = ("label", "figure", "measured", "unit", "verdict")


def certified(certificate: dict[str, Any]) -> dict[str, Any]:
    """The predicate's fields that certificate.json holds: run, class, software, node, checks."""
    run, spec = certificate.get("run") or {}, certificate.get("class") or {}
    return {
        "rigcheck_version": run.get("rigcheck_version"),
        "run": {
            **{k: run.get(k) for k in RUN_KEYS},
            "tier": tier_of(certificate),
            **{k: certificate.get(k) for k in VERDICT_KEYS},
        },
        "class": {k: spec.get(k) for k in ("name", "spec_file", "spec_version")},
        "software": certificate.get("software"),
        "node": node_identity(certificate.get("machine") or {}),
        "checks": {c["id"]: _check(c) for c in certificate.get("checks") or []},
        "not_run": certificate.get("not_run"),
    }


def _check(check: dict[str, Any]) -> dict[str, Any]:
    figures = [{k: f.get(k) for k in FIGURE_KEYS} for f in check.get("figures") or []]
    return {"outcome": check.get("outcome"), "figures": figures}


def subjects(certificate: dict[str, Any]) -> list[dict[str, Any]]:
    """The whole certificate, and its facts snapshot on its own (named by a JSON pointer)."""
    return [
        {"name": CERTIFICATE, "digest": {"sha256": sha256_of(certificate)}},
        {"name": FACTS, "digest": {"sha256": sha256_of(certificate.get("machine"))}},
    ]


def build_statement(
    certificate: dict[str, Any],
    node: dict[str, Any],
    spec_sha256: str,
    nonce: str,
    salt: str,
    attested_at: str,
) -> dict[str, Any]:
    """`node` is the unmasked facts of the same GPUs (checked by identity_mismatches first)."""
    predicate = {
        **certified(certificate),
        "spec_sha256": spec_sha256,
        "serials": {
            str(bus_id(d)): secret_digests(d, salt, nonce)
            for d in node.get("devices") or []
            if isinstance(d, dict)
        },
        "challenge": {"salt": salt, "nonce_sha256": nonce_digest(salt, nonce)},
        "attested_at": attested_at,
    }
    return {
        "_type": STATEMENT_TYPE,
        "subject": subjects(certificate),
        "predicateType": PREDICATE_TYPE,
        "predicate": predicate,
    }
