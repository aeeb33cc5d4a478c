"""A signed certificate to verify: one real run of the suites, replayed on the synthetic H100
snapshot with the synthetic H100 measurements (no GPU), then attested with a key made here."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from attest_inputs import BAD, MEASUREMENTS, NONCE, SELECTION, SNAPSHOT, SPEC, SUITES

from rigcheck.attest.keys import KeyPair
from rigcheck.attest.signing import attest
from rigcheck.cli import main
from rigcheck.layout import ROOT_DIR


@pytest.fixture(scope="session")
def run_dir(tmp_path_factory) -> Path:
    """The run folder of `pytest -m h100` replayed, as a user runs it (a subprocess)."""
    out = tmp_path_factory.mktemp("attest") / "run"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-m", "h100",
         "-k", SELECTION, f"--facts={SNAPSHOT}", f"--replay-measurements={MEASUREMENTS}",
         f"--report-dir={out}", str(SUITES)],
        capture_output=True, text=True, timeout=300, cwd=ROOT_DIR,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


@pytest.fixture(scope="session")
def key() -> KeyPair:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    private = Ed25519PrivateKey.generate()
    return KeyPair(private, private.public_key())


@pytest.fixture(scope="session")
def node() -> dict[str, Any]:
    """The unmasked facts of the node the run replayed: what NVML reads on it."""
    return json.loads(SNAPSHOT.read_text())


@pytest.fixture(scope="session")
def signed_once(run_dir, key, node) -> tuple[dict, dict]:
    """(certificate, envelope): a test that changes them changes a deep copy."""
    certificate = json.loads((run_dir / "certificate.json").read_text())
    return certificate, attest(certificate, node, key, NONCE, SPEC)


@pytest.fixture(scope="session")
def good(run_dir, tmp_path_factory):
    """A signed copy of the run, its keys, and a folder of bad files beside them."""
    from rigcheck.attest.keys import generate_key

    root = tmp_path_factory.mktemp("bad-input")
    run = shutil.copytree(run_dir, root / "run")
    generate_key(root / "provider.key")
    assert main(["attest", str(run), "--nonce", NONCE, "--key", str(root / "provider.key"),
                 "--facts", str(SNAPSHOT)]) == 0  # fmt: skip
    bad = root / "bad"
    bad.mkdir()
    for name, content in BAD.items():
        if content == "DIR":
            (bad / name).mkdir()
        elif isinstance(content, bytes):
            (bad / name).write_bytes(content)
        elif content is not None:
            (bad / name).write_text(content)
    return {"RUN": str(run), "KEY": str(root / "provider.key"),
            "PUB": str(root / "provider.key.pub"), "BAD": bad}  # fmt: skip
