"""The node's identity in a statement: what the certificate shows of each GPU, and its serials
and UUIDs bound in full as keyed digests.

A digest is HMAC-SHA256 under a key made from the statement's salt and the renter's nonce, so
whoever holds the nonce (the renter) can confirm serials read from the node (NVML), while a
reader of a published certificate without the nonce cannot test guesses of a serial against it.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from rigcheck.reports.certificate import flatten
from rigcheck.reports.masking import SECRET_KEY, SHOWN_CHARS, masked, secrets_in

SHOWN_PATHS = ("index", "vendor", "name", "pci.bus_id", "pci.device_id", "pci.subsystem_id",
               "firmware.vbios")  # fmt: skip


def nonce_digest(salt: str, nonce: str) -> str:
    return _sha256(b"rigcheck nonce v1", salt, nonce)


def _secret_key(salt: str, nonce: str) -> bytes:
    return bytes.fromhex(_sha256(b"rigcheck serial key v1", salt, nonce))


def _sha256(label: bytes, salt: str, nonce: str) -> str:
    return hashlib.sha256(b"\0".join([label, salt.encode(), nonce.encode("utf-8")])).hexdigest()


def secret_leaves(device: dict[str, Any]) -> dict[str, str]:
    """{dotted path: value} of every serial or UUID in one device, as the certificate masks them."""
    return {
        path: value
        for path, value in flatten(device)
        if isinstance(value, str) and SECRET_KEY.search(path.rsplit(".", 1)[-1])
        and len(value) >= SHOWN_CHARS
    }  # fmt: skip


def secret_digests(device: dict[str, Any], salt: str, nonce: str) -> dict[str, str]:
    key = _secret_key(salt, nonce)
    return {
        path: hmac.new(key, f"{path}\0{value}".encode(), hashlib.sha256).hexdigest()
        for path, value in secret_leaves(device).items()
    }


def shown_device(device: dict[str, Any]) -> dict[str, Any]:
    """A device as the certificate shows it: board, PCI ids, VBIOS, and serials as masked."""
    leaves = dict(flatten(device))
    shown = {path: leaves.get(path) for path in SHOWN_PATHS}
    return {**shown, "secrets_shown": {p: leaves[p] for p in secret_leaves(device)}}


def node_identity(machine: dict[str, Any]) -> dict[str, Any]:
    """What the certificate's facts say the node is; verify derives it again from the file."""
    devices = machine.get("devices")
    host = machine.get("host")
    return {
        "host": host.get("hostname") if isinstance(host, dict) else None,
        "devices": [shown_device(d) for d in devices if isinstance(d, dict)]
        if isinstance(devices, list)
        else [],
    }


def bus_id(device: dict[str, Any]) -> Any:
    pci = device.get("pci")
    return pci.get("bus_id") if isinstance(pci, dict) else device.get("index")


def identity_mismatches(
    certified: dict[str, Any], node: dict[str, Any], unmasked: bool
) -> list[str]:
    """Where the serials read from `node` (full facts) are not the ones the certificate shows
    (masked): attest refuses to bind serials of another machine to a run."""
    secrets = secrets_in(node)
    shown = {bus_id(d): d for d in certified.get("devices") or []}
    read = {bus_id(d): d for d in node.get("devices") or [] if isinstance(d, dict)}
    if set(shown) != set(read):
        return [f"the certificate's GPUs are at {sorted(map(str, shown))}, the facts' at "
                f"{sorted(map(str, read))}"]  # fmt: skip
    problems = []
    for where, device in read.items():
        in_certificate = secret_leaves(shown[where])
        for path, value in secret_leaves(device).items():
            expected = value if unmasked else masked(value, secrets)
            if in_certificate.get(path) != expected:
                problems.append(
                    f"GPU {where}: {path} is {in_certificate.get(path)!r} in the certificate, "
                    f"{masked(value, secrets)!r} in the facts"
                )
    return problems
