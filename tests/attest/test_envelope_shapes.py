"""A signed envelope in every broken shape a renter may be handed, and `verify`'s own options
misused: refused or a usage error in one line, never a traceback, never accepted."""

from __future__ import annotations

import base64
import json
import shutil

import pytest
from attest_inputs import NONCE

from rigcheck.attest.signing import ENVELOPE_NAME
from rigcheck.cli import main


@pytest.fixture(scope="module")
def signed(good):
    """The signed run of conftest's `good` fixture and its envelope's text."""
    return good, (good["RUN"] + "/" + ENVELOPE_NAME)


def _verify(argv: list[str]) -> int:
    """main's exit code; argparse's own refusals exit through SystemExit, as on a shell."""
    try:
        return main(["verify", *argv])
    except SystemExit as exc:
        return int(exc.code)


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _mutate(envelope: dict, how: str) -> dict | str:
    cut = json.dumps(envelope)
    sig = envelope["signatures"][0]["sig"]
    return {
        "truncated": cut[: len(cut) // 2],
        "empty": "",
        "sig cut": {**envelope, "signatures": [{**envelope["signatures"][0], "sig": sig[:20]}]},
        "sig not base64": {**envelope, "signatures": [{"keyid": "", "sig": "%%%not-b64%%%"}]},
        "no signatures": {**envelope, "signatures": []},
        "signatures a dict": {**envelope, "signatures": {"sig": sig}},
        "payload not base64": {**envelope, "payload": "%%%"},
        "payload not json": {**envelope, "payload": _b64("not json")},
        "payload an array": {**envelope, "payload": _b64("[]")},
    }[how]


SHAPES = ["truncated", "empty", "sig cut", "sig not base64", "no signatures", "signatures a dict",
          "payload not base64", "payload not json", "payload an array"]  # fmt: skip


@pytest.mark.parametrize("how", SHAPES)
def test_a_broken_envelope_is_refused_in_one_line(signed, how, tmp_path, capsys):
    run, envelope_file = signed
    with open(envelope_file) as f:
        envelope = json.load(f)
    broken = _mutate(envelope, how)
    path = tmp_path / "envelope.json"
    path.write_text(broken if isinstance(broken, str) else json.dumps(broken))
    code = _verify([run["RUN"], "--envelope", str(path), "--nonce", NONCE, "--key", run["PUB"]])
    out, err = capsys.readouterr()
    assert code in (2, 3), (code, out, err)  # unreadable (2) or refused (3): never accepted
    said = out + err
    assert "Traceback" not in said and len([x for x in said.splitlines() if x.strip()]) >= 1
    assert len(err.splitlines()) <= 1, err


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["--nonce", NONCE + " "], 3),  # a nonce with a trailing space is another nonce
        (["--nonce", "another-nonce-of-the-renter"], 3),
        (["--nonce", NONCE, "--not-before", "2999-01-01T00:00:00Z"], 3),
        (["--nonce", NONCE, "--not-before", "yesterday"], 2),
        (["--nonce", NONCE, "--any-nonce"], 2),
    ],
)
def test_verify_options_misused(signed, argv, code, capsys):
    run, _ = signed
    got = _verify([run["RUN"], "--key", run["PUB"], *argv])
    out, err = capsys.readouterr()
    assert got == code, (got, out, err)
    assert "Traceback" not in out + err and len(err.splitlines()) <= 1, err


def test_save_facts_never_writes_over_a_file_of_another_kind(signed, tmp_path, capsys):
    run, _ = signed
    other = tmp_path / "notes.txt"
    other.write_text("the renter's own notes")
    got = _verify([run["RUN"], "--nonce", NONCE, "--key", run["PUB"],
                "--save-facts", str(other)])  # fmt: skip
    capsys.readouterr()
    assert got == 2 and other.read_text() == "the renter's own notes"
    run_copy = shutil.copytree(run["RUN"], tmp_path / "run")
    cert = run_copy / "certificate.json"
    before = cert.read_bytes()
    got = _verify([str(run_copy), "--nonce", NONCE, "--key", run["PUB"],
                "--save-facts", str(cert)])  # fmt: skip
    capsys.readouterr()
    assert got == 2 and cert.read_bytes() == before
