"""`rigcheck keygen`, `attest` and `verify` as a provider and a renter type them: files where
they belong, one line per finding, the documented exit codes, one line for bad input."""

from __future__ import annotations

import json
import re
import shutil
import stat
from pathlib import Path

import pytest
from attest_inputs import NONCE, SNAPSHOT

from rigcheck.cli import main
from rigcheck.layout import ROOT_DIR


def rigcheck(capsys, *args: str) -> tuple[int, list[str], str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


@pytest.fixture
def keys(tmp_path, capsys) -> tuple[Path, Path]:
    private = tmp_path / "keys" / "provider.key"
    private.parent.mkdir()
    assert rigcheck(capsys, "keygen", private)[0] == 0
    return private, private.with_name("provider.key.pub")


@pytest.fixture
def run(tmp_path, run_dir) -> Path:
    """A copy of the replayed run folder, for one test to sign and change."""
    return Path(shutil.copytree(run_dir, tmp_path / "run"))


def test_keygen_writes_a_private_key_only_its_owner_reads_and_never_overwrites(keys, capsys):
    private, public = keys
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert public.read_text().startswith("-----BEGIN PUBLIC KEY-----")
    code, out, err = rigcheck(capsys, "keygen", private)
    assert (code, out) == (2, [])
    assert err == f"rigcheck: {private} exists: rigcheck never overwrites a key; name another\n"


def test_a_provider_signs_and_a_renter_accepts(run, keys, capsys):
    private, public = keys
    code, out, _ = rigcheck(capsys, "attest", run, "--nonce", NONCE, "--key", private,
                            "--facts", SNAPSHOT)  # fmt: skip
    assert code == 0, out
    assert out == [f"wrote {run / 'certificate.dsse.json'}: pass run of h100, signed"]
    assert private.read_bytes() not in b"".join(p.read_bytes() for p in run.iterdir())
    code, out, _ = rigcheck(capsys, "verify", run, "--nonce", NONCE, "--key", public,
                            "--facts", SNAPSHOT)  # fmt: skip
    assert code == 0, out
    assert [line.split()[0] for line in out[:-1]] == ["ok"] * len(out[:-1])
    assert out[-1] == f"verdict  accepted: {run / 'certificate.json'}"
    assert "ok       GPU 0000:18:00.0: fabric.cluster_uuid, serial, uuid match the certified" in out


def test_the_key_can_come_from_the_environment(run, keys, capsys, monkeypatch):
    private, public = keys
    monkeypatch.setenv("RIGCHECK_ATTEST_KEY", private.read_text())
    monkeypatch.setenv("RIGCHECK_ATTEST_PUBLIC_KEY", public.read_text())
    assert rigcheck(capsys, "attest", run, "--nonce", NONCE, "--facts", SNAPSHOT)[0] == 0
    assert rigcheck(capsys, "verify", run, "--nonce", NONCE)[0] == 0


def test_another_providers_key_is_refused(run, keys, tmp_path, capsys):
    private, _ = keys
    rigcheck(capsys, "attest", run, "--nonce", NONCE, "--key", private, "--facts", SNAPSHOT)
    other = tmp_path / "other.key"
    rigcheck(capsys, "keygen", other)
    code, out, _ = rigcheck(capsys, "verify", run, "--nonce", NONCE, "--key", f"{other}.pub")
    assert code == 3
    assert re.fullmatch(r"refused  signature: no signature by key [0-9a-f]{16} holds \(signed "
                        r"by: [0-9a-f]{16}\): the statement was changed after signing, or "
                        r"signed by another key", out[0])  # fmt: skip
    assert out[-1] == f"verdict  REFUSED: {run / 'certificate.json'}"


def test_attest_refuses_the_facts_of_another_node(run, keys, tmp_path, capsys):
    private, _ = keys
    other = json.loads(SNAPSHOT.read_text())
    other["devices"][0]["serial"] = "1650000000999"
    (tmp_path / "other.json").write_text(json.dumps(other))
    code, _, err = rigcheck(capsys, "attest", run, "--nonce", NONCE, "--key", private,
                            "--facts", tmp_path / "other.json")  # fmt: skip
    assert code == 2
    assert err == (
        "rigcheck: the facts are not of the certified node: GPU 0000:18:00.0: serial is "
        "'masked…0001' in the certificate, 'masked…0999' in the facts. Attest on the node that "
        "ran the check, or pass --facts with its snapshot\n"
    )
    assert not (run / "certificate.dsse.json").exists()


def test_attest_refuses_a_key_inside_the_run_folder(run, keys, capsys):
    private, _ = keys
    inside = run / "provider.key"
    shutil.copy(private, inside)
    code, _, err = rigcheck(capsys, "attest", run, "--nonce", NONCE, "--key", inside)
    assert code == 2
    assert err.endswith("is inside a run folder, which is handed to renters: keep keys elsewhere\n")


def test_attest_refuses_a_short_nonce_and_a_run_still_in_progress(run, keys, capsys):
    private, _ = keys
    code, _, err = rigcheck(capsys, "attest", run, "--nonce", "1234", "--key", private,
                            "--facts", SNAPSHOT)  # fmt: skip
    assert code == 2 and "too short to be a challenge" in err
    certificate = json.loads((run / "certificate.json").read_text())
    certificate["exit_status"] = None
    (run / "certificate.json").write_text(json.dumps(certificate))
    code, _, err = rigcheck(capsys, "attest", run, "--nonce", NONCE, "--key", private,
                            "--facts", SNAPSHOT)  # fmt: skip
    assert code == 2 and "attest a finished run" in err


def test_verify_without_an_envelope_says_how_to_get_one(run, keys, capsys):
    _, public = keys
    code, out, err = rigcheck(capsys, "verify", run, "--nonce", NONCE, "--key", public)
    assert (code, out) == (2, [])
    envelope = run / "certificate.dsse.json"
    assert err == f"rigcheck: {envelope}: no such signed envelope (rigcheck attest writes it)\n"


def test_verify_needs_a_nonce_or_says_it_checks_none(run, keys, capsys):
    private, public = keys
    rigcheck(capsys, "attest", run, "--nonce", NONCE, "--key", private, "--facts", SNAPSHOT)
    with pytest.raises(SystemExit) as stopped:
        main(["verify", str(run), "--key", str(public)])
    assert stopped.value.code == 2
    assert "one of the arguments --nonce --any-nonce is required" in capsys.readouterr().err
    code, out, _ = rigcheck(capsys, "verify", run, "--any-nonce", "--key", public)
    assert code == 0
    assert "note     nonce: not checked (--any-nonce): this may be an old certificate" in out


def test_a_signed_failing_certificate_is_authentic_but_short(tmp_path, keys, capsys):
    """fixtures/certificates/h100-node-after.json (two GPUs, a driver and a figure failing),
    signed with its serials, which tests/reports/make_certificates.py wrote in full."""
    private, public = keys
    certificate = ROOT_DIR / "fixtures" / "certificates" / "h100-node-after.json"
    folder = tmp_path / "run"  # beside the keys folder, not above it
    folder.mkdir()
    shutil.copy(certificate, folder / "certificate.json")
    node = json.loads(certificate.read_text())["machine"]
    for i, device in enumerate(node["devices"]):  # make_certificates.py: SERIALS, UUIDS
        device["serial"] = f"165292345678{i + 1}"
        device["uuid"] = f"GPU-5d1e2c33-8f7a-4c1b-9e2d-0a1b2c3d4e5{i + 1}"
    (tmp_path / "node.json").write_text(json.dumps(node))
    code, _, err = rigcheck(capsys, "attest", folder, "--nonce", NONCE, "--key", private,
                            "--facts", tmp_path / "node.json")  # fmt: skip
    assert code == 0, err
    code, out, _ = rigcheck(capsys, "verify", folder, "--nonce", NONCE, "--key", public,
                            "--facts", tmp_path / "node.json")  # fmt: skip
    assert code == 1
    assert "short    verdict: fail (the provider's own run did not pass)" in out
    assert sum("match the certified" in line for line in out) == 2
    assert out[-1] == f"verdict  authentic, but short: {folder / 'certificate.json'}"


def test_save_facts_writes_only_facts_that_match_their_signed_hash(run, keys, tmp_path, capsys):
    private, public = keys
    rigcheck(capsys, "attest", run, "--nonce", NONCE, "--key", private, "--facts", SNAPSHOT)
    saved = tmp_path / "node-facts.json"
    code, out, _ = rigcheck(capsys, "verify", run, "--nonce", NONCE, "--key", public,
                            "--save-facts", saved)  # fmt: skip
    assert code == 0
    assert f"wrote    {saved}: rigcheck check h100 --facts={saved}" in out
    certificate = json.loads((run / "certificate.json").read_text())
    assert json.loads(saved.read_text()) == certificate["machine"]
    saved.unlink()
    certificate["machine"]["devices"][0]["memory_total_bytes"] += 2**30  # a bigger GPU
    (run / "certificate.json").write_text(json.dumps(certificate))
    code, out, _ = rigcheck(capsys, "verify", run, "--nonce", NONCE, "--key", public,
                            "--save-facts", saved)  # fmt: skip
    assert code == 3 and not saved.exists()
    assert any(line.startswith("refused  the facts snapshot in certificate.json: changed")
               for line in out)  # fmt: skip
