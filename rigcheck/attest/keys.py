"""Ed25519 keys for signing certificates: read from a file or an environment variable, made by
`rigcheck keygen`. A private key is never written into a run folder: the folder is what is
handed to the renter."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rigcheck.errors import RigcheckError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (
        Ed25519PrivateKey,
        Ed25519PublicKey,
    )

    PublicKey = Ed25519PublicKey
else:
    PublicKey = Any

PRIVATE_ENV = "RIGCHECK_ATTEST_KEY"  # the private key's PEM text itself (a CI secret)
PUBLIC_ENV = "RIGCHECK_ATTEST_PUBLIC_KEY"  # the public key's PEM text, for verify
INSTALL = "pip install 'rigcheck[attest]' (or: pip install cryptography)"


class AttestError(RigcheckError):
    """A key, an envelope or a certificate that attest or verify cannot use."""


@dataclass(frozen=True)
class KeyPair:
    private: Ed25519PrivateKey
    public: Ed25519PublicKey


def serialization() -> Any:
    """cryptography's serialization module, or one line saying how to install it."""
    try:
        from cryptography.hazmat.primitives import serialization
    except ImportError:
        raise AttestError(
            f"signing and verifying need the cryptography package: {INSTALL}"
        ) from None
    return serialization


def key_id(public: Ed25519PublicKey) -> str:
    """sha256 of the raw 32-byte public key: the keyid in the envelope, and what verify names."""
    s = serialization()
    raw = public.public_bytes(s.Encoding.Raw, s.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()


def load_private_key(path: str | None) -> KeyPair:
    text, where = _pem(path, PRIVATE_ENV, "private key")
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    try:
        key = serialization().load_pem_private_key(text, password=None)
    except (ValueError, TypeError) as exc:
        raise AttestError(f"{where}: not an unencrypted PEM private key ({exc})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise AttestError(f"{where}: not an Ed25519 key; make one with `rigcheck keygen FILE`")
    return KeyPair(key, key.public_key())


def load_public_key(path: str | None) -> Ed25519PublicKey:
    text, where = _pem(path, PUBLIC_ENV, "public key")
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        key = serialization().load_pem_public_key(text)
    except (ValueError, TypeError) as exc:
        raise AttestError(f"{where}: not a PEM public key ({exc})") from None
    if not isinstance(key, Ed25519PublicKey):
        raise AttestError(f"{where}: not an Ed25519 public key (the provider's FILE.pub)")
    return key


def _pem(path: str | None, env: str, what: str) -> tuple[bytes, str]:
    if path:
        try:
            return Path(path).expanduser().read_bytes(), path
        except OSError as exc:
            raise AttestError(f"{path}: cannot read the {what}: {exc.strerror}") from None
    text = os.environ.get(env, "")
    if not text.strip():
        raise AttestError(f"no {what}: pass --key FILE, or put its PEM text in ${env}")
    return text.encode("utf-8"), f"${env}"


def generate_key(path: Path) -> tuple[Path, str]:
    """Write a new private key to PATH (mode 0600, never over a file) and its public key to
    PATH.pub; returns the public key's path and key id."""
    s = serialization()
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    public_path = path.with_name(path.name + ".pub")
    for target in (path, public_path):
        if target.exists():
            raise AttestError(f"{target} exists: rigcheck never overwrites a key; name another")
    key = Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(s.Encoding.PEM, s.PrivateFormat.PKCS8, s.NoEncryption())
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        out.write(private_pem)
    public = key.public_key()
    public_path.write_bytes(
        public.public_bytes(s.Encoding.PEM, s.PublicFormat.SubjectPublicKeyInfo)
    )
    return public_path, key_id(public)
