"""`rigcheck keygen`, `rigcheck attest` and `rigcheck verify`: signed acceptance certificates."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rigcheck.attest.keys import AttestError


def add_parser(subparsers: Any) -> None:
    keygen = subparsers.add_parser("keygen", help="make an Ed25519 key pair to sign certificates")
    keygen.add_argument("path", metavar="FILE", help="the private key (FILE.pub: the public one)")
    keygen.set_defaults(func=run_keygen)

    attest = subparsers.add_parser(
        "attest",
        help="sign a finished run's certificate for a renter, bound to the node and their nonce",
    )
    attest.add_argument("run", metavar="RUN", help="a run folder, or its certificate.json")
    attest.add_argument("--nonce", required=True, help="the renter's challenge, as they gave it")
    attest.add_argument("--key", metavar="FILE", help="private key (default: $RIGCHECK_ATTEST_KEY)")
    attest.add_argument(
        "--facts", metavar="FILE", help="the run's unmasked snapshot (default: read this node now)"
    )
    attest.add_argument("--spec", metavar="FILE", help="the spec the run used, if moved")
    attest.add_argument(
        "-o", "--output", metavar="FILE", help="default: certificate.dsse.json beside it"
    )
    attest.set_defaults(func=run_attest)

    verify = subparsers.add_parser(
        "verify",
        help="check a signed certificate: signature, nonce, facts; --spec re-judges it",
        description="Exit 0: authentic, and the run passed (and meets --spec). 1: authentic, "
        "but the run did not pass or falls short of --spec. 3: refused (bad signature, another "
        "nonce, a changed certificate or facts, serials not the node's). 2: bad input.",
    )
    verify.add_argument("cert", metavar="CERT", help="a run folder, or its certificate.json")
    verify.add_argument(
        "--envelope", metavar="FILE", help="default: certificate.dsse.json beside it"
    )
    challenge = verify.add_mutually_exclusive_group(required=True)
    challenge.add_argument("--nonce", help="the challenge you gave the provider")
    challenge.add_argument(
        "--any-nonce",
        action="store_true",
        help="skip the freshness check (an archived certificate)",
    )
    verify.add_argument(
        "--key", metavar="PUB", help="provider's public key (default: $RIGCHECK_ATTEST_PUBLIC_KEY)"
    )
    verify.add_argument("--spec", metavar="FILE", help="your own spec: re-judge the signed figures")
    verify.add_argument(
        "--facts",
        metavar="FILE",
        help="your own read of the node (rigcheck facts -o): confirm its serials",
    )
    verify.add_argument(
        "--not-before",
        metavar="TIME",
        type=moment_arg,
        help="when you issued the nonce (UTC, e.g. 2026-11-29T05:00:00Z): refuse older runs",
    )
    verify.add_argument(
        "--save-facts",
        metavar="FILE",
        help="once authentic, write its facts snapshot here, to replay every fact check on it",
    )
    verify.set_defaults(func=run_verify)


def moment_arg(text: str):
    from rigcheck.attest.verify import parse_moment

    try:
        return parse_moment(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a time: write it as 2026-11-29T05:00:00Z"
        ) from None


def run_keygen(args: argparse.Namespace) -> int:
    from rigcheck.attest.keys import generate_key
    from rigcheck.paths import output_problem

    path = Path(args.path).expanduser()
    problem = output_problem(path, option="FILE") or _in_run_folder(path)
    if problem:
        raise AttestError(problem)
    public, key_id = generate_key(path)
    print(f"wrote {path} (private: keep it off the run folders) and {public} (give it to renters)")
    print(f"key id {key_id}")
    return 0


def run_attest(args: argparse.Namespace) -> int:
    from rigcheck.attest.keys import load_private_key
    from rigcheck.attest.signing import ENVELOPE_NAME, attest, spec_path_of, write_envelope
    from rigcheck.paths import output_problem
    from rigcheck.reports.certificate import certificate_path, load_certificate

    certificate_file = certificate_path(args.run)
    certificate = load_certificate(certificate_file)
    if args.key and (problem := _in_run_folder(Path(args.key), certificate_file.parent)):
        raise AttestError(problem)
    output = Path(args.output) if args.output else certificate_file.with_name(ENVELOPE_NAME)
    if problem := output_problem(output):
        raise AttestError(problem)
    key = load_private_key(args.key)
    envelope = attest(
        certificate, _node(args.facts, certificate), key, args.nonce,
        spec_path_of(certificate, args.spec),
    )  # fmt: skip
    write_envelope(output, envelope)
    print(f"wrote {output}: {certificate['verdict']} run of {certificate['class']['name']}, signed")
    return 0


def _node(facts_file: str | None, certificate: dict[str, Any]) -> dict[str, Any]:
    """The unmasked facts whose serials are bound: --facts, the certificate itself when it was
    written with --unmask-serials, else this node read now."""
    from rigcheck.facts import collect_facts, load_facts

    if facts_file:
        return load_facts(facts_file).data
    if not certificate["masked"]:
        return certificate["machine"]
    return collect_facts().data


def _in_run_folder(key: Path, folder: Path | None = None) -> str | None:
    """A private key inside a run folder would be handed over with it."""
    from rigcheck.reports.certificate import FILE_NAME

    where = key.expanduser().resolve().parent
    holders = [where, *where.parents]
    if (folder is not None and folder.resolve() in holders) or (where / FILE_NAME).exists():
        return f"{key} is inside a run folder, which is handed to renters: keep keys elsewhere"
    return None


def run_verify(args: argparse.Namespace) -> int:
    from rigcheck.attest.finding import exit_code, final_word
    from rigcheck.attest.keys import load_public_key
    from rigcheck.attest.signing import ENVELOPE_NAME
    from rigcheck.attest.verify import verify_certificate
    from rigcheck.facts.snapshot import SNAPSHOT_KEYS
    from rigcheck.jsonfile import read_json
    from rigcheck.paths import holds_another_kind, json_with, output_problem
    from rigcheck.reports.certificate import certificate_path, write_atomic

    problem = args.save_facts and (
        output_problem(args.save_facts, "--save-facts")
        or holds_another_kind(
            args.save_facts, "--save-facts", "facts snapshot", json_with(*SNAPSHOT_KEYS)
        )
    )
    if problem:  # the renter's own file (or the certificate itself) is never written over
        raise AttestError(problem)
    certificate_file = certificate_path(args.cert)
    envelope_file = (
        Path(args.envelope) if args.envelope else certificate_file.with_name(ENVELOPE_NAME)
    )
    public = load_public_key(args.key)
    certificate = read_json(certificate_file, "certificate", AttestError)
    envelope = read_json(envelope_file, "signed envelope (rigcheck attest writes it)", AttestError)
    spec = _spec(args.spec)
    node = _renter_facts(args.facts, args.nonce)
    findings = verify_certificate(
        certificate, envelope, public, args.nonce, spec, node, args.not_before
    )
    for finding in findings:
        print(finding.line())
    code = exit_code(findings)
    if args.save_facts and code < 3:  # only facts that match their signed hash
        write_atomic(Path(args.save_facts), json.dumps(certificate["machine"], indent=2) + "\n")
        name = certificate["class"]["name"]
        print(f"{'wrote':<8} {args.save_facts}: rigcheck check {name} --facts={args.save_facts}")
    print(f"{'verdict':<8} {final_word(findings)}: {certificate_file}")
    return code


def _spec(path: str | None):
    from rigcheck.spec import load_spec_file

    return load_spec_file(Path(path)) if path else None


def _renter_facts(path: str | None, nonce: str | None) -> dict[str, Any] | None:
    from rigcheck.facts import load_facts

    if path is None:
        return None
    if nonce is None:
        raise AttestError(
            "--facts confirms serials with your --nonce: it cannot go with --any-nonce"
        )
    return load_facts(path).data
