"""`rigcheck attest`: sign a finished run's certificate, bound to its node and a renter's nonce."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import secrets
from pathlib import Path
from typing import Any

from rigcheck.attest.envelope import sign_envelope
from rigcheck.attest.identity import identity_mismatches
from rigcheck.attest.keys import AttestError, KeyPair
from rigcheck.attest.statement import build_statement
from rigcheck.layout import ROOT_DIR
from rigcheck.reports.certificate import write_atomic
from rigcheck.spec import load_spec_file

ENVELOPE_NAME = "certificate.dsse.json"  # beside certificate.json in the run folder
MIN_NONCE = 8  # characters: a shorter "challenge" is guessable, and so replayable


def attest(
    certificate: dict[str, Any],
    node: dict[str, Any],
    key: KeyPair,
    nonce: str,
    spec_path: Path,
    now: dt.datetime | None = None,
) -> dict[str, Any]:
    """The signed DSSE envelope; AttestError when the run, node or spec cannot be vouched for."""
    if len(nonce) < MIN_NONCE:
        raise AttestError(
            f"--nonce {nonce!r} is too short to be a challenge: ask the renter for theirs "
            f"(at least {MIN_NONCE} characters; e.g. `openssl rand -hex 16`)"
        )
    if certificate.get("exit_status") is None:
        raise AttestError(
            "the certificate is of a run still in progress (or killed: no exit status): "
            "attest a finished run"
        )
    problems = identity_mismatches(certificate["machine"], node, not certificate["masked"])
    if problems:
        raise AttestError(
            f"the facts are not of the certified node: {problems[0]}"
            + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else "")
            + ". Attest on the node that ran the check, or pass --facts with its snapshot"
        )
    spec_sha256 = spec_hash(certificate, spec_path)
    now = now or dt.datetime.now(dt.timezone.utc)
    statement = build_statement(
        certificate, node, spec_sha256, nonce, secrets.token_hex(16), _iso(now)
    )
    return sign_envelope(statement, key)


def spec_path_of(certificate: dict[str, Any], given: str | None) -> Path:
    """The spec the run was judged against: --spec, else the file the certificate names."""
    if given:
        return Path(given)
    named = (certificate.get("class") or {}).get("spec_file")
    if not named:
        raise AttestError("the certificate names no spec file (no class): nothing to attest")
    path = Path(named)
    return path if path.is_absolute() else ROOT_DIR / path


def spec_hash(certificate: dict[str, Any], path: Path) -> str:
    """sha256 of the spec file's bytes, once it is shown to be the class and version judged."""
    spec = load_spec_file(path)
    entry = certificate.get("class") or {}
    if (spec.name, spec.data["spec_version"]) != (entry.get("name"), entry.get("spec_version")):
        raise AttestError(
            f"{path} is the spec of {spec.name} v{spec.data['spec_version']}, the run was judged "
            f"against {entry.get('name')} v{entry.get('spec_version')}: pass --spec with the "
            "file the run used"
        )
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_envelope(path: Path, envelope: dict[str, Any]) -> None:
    write_atomic(path, json.dumps(envelope, indent=2) + "\n")


def _iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
