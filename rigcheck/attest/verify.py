"""`rigcheck verify`: whether a signed certificate is the one a provider signed for this
challenge, and what it says. Each finding is one line; the worst decides the exit code."""

from __future__ import annotations

import datetime as dt
import hmac
from typing import Any

from rigcheck.attest.envelope import open_envelope
from rigcheck.attest.finding import NOTE, OK, REFUSED, SHORT, Finding
from rigcheck.attest.identity import bus_id, nonce_digest, secret_digests
from rigcheck.attest.keys import PublicKey
from rigcheck.attest.statement import PREDICATE_TYPE, STATEMENT_TYPE, certified, subjects
from rigcheck.spec import Spec

ACCEPTED_VERDICTS = ("pass", "warn")
SHOWN_DIFFERENCES = 5


def authenticate(
    envelope: Any, certificate: Any, public: PublicKey, nonce: str | None
) -> tuple[dict[str, Any] | None, list[Finding]]:
    """(the signed predicate, findings); the predicate is None when nothing can be trusted."""
    statement, how = open_envelope(envelope, public)
    if statement is None:
        return None, [Finding(REFUSED, f"signature: {how}")]
    if not well_formed(statement):
        return None, [Finding(REFUSED, f"signed, but not a rigcheck certificate statement ({how})")]
    predicate = statement["predicate"]
    found = [Finding(OK, f"signature: {how}"), nonce_finding(predicate, nonce)]
    found += binding_findings(statement, certificate)
    return predicate, found


def well_formed(statement: dict[str, Any]) -> bool:
    """The shape verify reads; a statement of another kind, even validly signed, is refused."""
    subject = statement.get("subject")
    return (
        statement.get("_type") == STATEMENT_TYPE
        and statement.get("predicateType") == PREDICATE_TYPE
        and isinstance(statement.get("predicate"), dict)
        and isinstance(subject, list)
        and all(isinstance(s, dict) and isinstance(s.get("digest"), dict) for s in subject)
    )


def nonce_finding(predicate: dict[str, Any], nonce: str | None) -> Finding:
    if nonce is None:
        return Finding(NOTE, "nonce: not checked (--any-nonce): this may be an old certificate")
    challenge = predicate.get("challenge") or {}
    expected = nonce_digest(str(challenge.get("salt")), nonce)
    if hmac.compare_digest(expected, str(challenge.get("nonce_sha256"))):
        return Finding(OK, "nonce: answers your challenge")
    return Finding(
        REFUSED,
        "nonce: this certificate answers another challenge, not yours (an old certificate "
        "replayed, or one made for someone else): ask for a run attested with your --nonce",
    )


def parse_moment(text: str) -> dt.datetime:
    """'2026-11-29T05:00:00Z' (or with an offset; no zone means UTC) -> an aware datetime."""
    moment = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.timezone.utc)


def freshness_finding(predicate: dict[str, Any], not_before: dt.datetime) -> Finding:
    """The nonce is bound when a run is signed, not when it starts: a run that started before
    the challenge was issued is an older run, signed for it."""
    started = (predicate.get("run") or {}).get("started_at")
    try:
        older = parse_moment(str(started)) < not_before
    except ValueError:
        older = True  # no readable start time: not shown to be fresh
    shown = not_before.isoformat().replace("+00:00", "Z")
    if older:
        return Finding(REFUSED, f"run: started {started}, before your challenge ({shown}): "
                                "an older run, signed for your nonce")  # fmt: skip
    return Finding(OK, f"run: started {started}, after your challenge ({shown})")


def binding_findings(statement: dict[str, Any], certificate: Any) -> list[Finding]:
    """certificate.json and its facts against the signed digests; changed fields by name."""
    signed = {s.get("name"): s.get("digest", {}).get("sha256") for s in statement["subject"]}
    try:
        now = {s["name"]: s["digest"]["sha256"] for s in subjects(certificate)}
        derived = certified(certificate)
    except (AttributeError, KeyError, TypeError, ValueError):
        return [
            Finding(REFUSED, "certificate.json: not the certificate signed (its shape differs)")
        ]
    found = []
    for name, digest in now.items():
        same = digest == signed.get(name)
        what = "the facts snapshot in certificate.json" if "#" in name else "certificate.json"
        found.append(
            Finding(OK, f"{what}: matches its signed sha256 {digest[:16]}")
            if same
            else Finding(
                REFUSED,
                f"{what}: changed since it was signed (sha256 {digest[:16]}, "
                f"signed {str(signed.get(name))[:16]})",
            )
        )
    predicate = statement["predicate"]
    changes = differences({k: predicate.get(k) for k in derived}, derived)
    found += [
        Finding(REFUSED, f"{path}: signed {before!r}, certificate.json says {after!r}")
        for path, before, after in changes[:SHOWN_DIFFERENCES]
    ]
    if len(changes) > SHOWN_DIFFERENCES:
        found.append(Finding(REFUSED, f"... and {len(changes) - SHOWN_DIFFERENCES} more changes"))
    return found


def differences(signed: Any, now: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """(path, signed value, value now) for every leaf that differs."""
    if isinstance(signed, dict) and isinstance(now, dict):
        keys = list(signed) + [k for k in now if k not in signed]
        return [d for k in keys for d in differences(signed.get(k), now.get(k), _join(path, k))]
    if isinstance(signed, list) and isinstance(now, list) and len(signed) == len(now):
        return [
            d
            for i, (a, b) in enumerate(zip(signed, now, strict=True))
            for d in differences(a, b, f"{path}[{i}]")
        ]
    return [] if signed == now and type(signed) is type(now) else [(path, signed, now)]


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if key.isidentifier() else f"{path}[{key}]"


def summary(predicate: dict[str, Any]) -> list[Finding]:
    """What was signed, in one line, and the provider's own verdict."""
    run, spec = predicate.get("run") or {}, predicate.get("class") or {}
    figures = sum(len(c.get("figures") or []) for c in (predicate.get("checks") or {}).values())
    line = (
        f"certified: class {spec.get('name')} ({spec.get('spec_file')} "
        f"v{spec.get('spec_version')}, "
        f"sha256 {str(predicate.get('spec_sha256'))[:16]}), rigcheck "
        f"{predicate.get('rigcheck_version')}, tier {run.get('tier') or 'all'}, host "
        f"{(predicate.get('node') or {}).get('host')}, run {run.get('started_at')} to "
        f"{run.get('finished_at')}, attested {predicate.get('attested_at')}: "
        f"{len(predicate.get('checks') or {})} checks, {figures} figures"
    )
    verdict = run.get("verdict")
    if verdict in ACCEPTED_VERDICTS and not run.get("partial"):
        return [Finding(OK, line), Finding(OK, f"verdict: {verdict}")]
    return [
        Finding(OK, line),
        Finding(SHORT, f"verdict: {verdict} (the provider's own run did not pass)"),
    ]


def serial_findings(predicate: dict[str, Any], node: dict[str, Any], nonce: str) -> list[Finding]:
    """The renter's own read of the node (`rigcheck facts -o`, unmasked) against the bound
    serials and UUIDs, GPU by GPU (by PCI bus id)."""
    challenge = predicate.get("challenge") or {}
    bound = predicate.get("serials") or {}
    read = {str(bus_id(d)): d for d in node.get("devices") or [] if isinstance(d, dict)}
    found = []
    for where in sorted(set(bound) | set(read)):
        if where not in read:
            found.append(Finding(REFUSED, f"GPU {where}: certified, but not on this node"))
        elif where not in bound:
            found.append(Finding(REFUSED, f"GPU {where}: on this node, but not certified"))
        else:
            digests = secret_digests(read[where], str(challenge.get("salt")), nonce)
            wrong = sorted(
                p for p in set(digests) | set(bound[where]) if digests.get(p) != bound[where].get(p)
            )
            found.append(
                Finding(REFUSED, f"GPU {where}: {', '.join(wrong)} not the certified one")
                if wrong
                else Finding(OK, f"GPU {where}: {', '.join(sorted(digests))} match the certified")
            )
    return found


def verify_certificate(
    certificate: Any,
    envelope: Any,
    public: PublicKey,
    nonce: str | None,
    spec: Spec | None = None,
    node: dict[str, Any] | None = None,
    not_before: dt.datetime | None = None,
) -> list[Finding]:
    """Every finding, in order: authenticity first; the rest only on an authentic certificate."""
    from rigcheck.attest.rejudge import rejudge

    predicate, findings = authenticate(envelope, certificate, public, nonce)
    if predicate is None or any(f.level == REFUSED for f in findings):
        return findings
    if not_before is not None:
        findings.append(freshness_finding(predicate, not_before))
    findings += summary(predicate)
    if node is not None and nonce is not None:
        findings += serial_findings(predicate, node, nonce)
    if spec is not None:
        findings += rejudge(predicate, certificate["machine"], spec)
    return findings
