"""A run's certificate (and the unmasked facts) as rows of the store's tables."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from rigcheck.facts.fact_type import PLACEHOLDERS
from rigcheck.gate.tiers import tier_of
from rigcheck.reports.masking import mask

GPU_PARAM = re.compile(r"(?:^|[\[\-_ ])gpu(\d+)(?:$|[\]\-_ ])")
PCI_ADDRESS = re.compile(r"\b[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]\b")
MESSAGE_CHARS = 500


def board_key(value: str | None) -> str | None:
    """A fixed-length digest of a full serial or UUID: finds one board again across runs without
    keeping the number itself. Serials are short numbers, so this hides them from a casual
    reader, not from someone who tries every serial: the store is as private as its folder."""
    if not isinstance(value, str) or not identifies_a_board(value):
        return None
    return hashlib.sha256(f"rigcheck-board:{value.strip()}".encode()).hexdigest()


def identifies_a_board(value: str) -> bool:
    """Not a placeholder ("[N/A]", "[Not Supported]": what GeForce boards answer for a serial)
    and not all zeros: such a value would make every board that shares it one board."""
    text = value.strip()
    return text.lower() not in PLACEHOLDERS and set(text) - {"0", "-"} != set()


def node_name(certificate: dict[str, Any]) -> str:
    host = certificate["machine"].get("host")
    name = host.get("hostname") if isinstance(host, dict) else None
    return name if isinstance(name, str) and name else "unknown-host"


def run_row(certificate: dict[str, Any]) -> dict[str, Any]:
    run = certificate["run"]
    return {
        "run_id": run["id"],
        "node": node_name(certificate),
        "class_name": certificate["class"].get("name"),
        "origin": _origin(certificate),
        "tier": tier_of(certificate),
        "verdict": certificate["verdict"],
        "exit_status": certificate.get("exit_status"),
        "started_at": run["started_at"],
        "root_cause": certificate.get("root_cause"),
    }


def _origin(certificate: dict[str, Any]) -> str | None:
    origin = certificate["machine"].get("origin")
    kind = origin.get("kind") if isinstance(origin, dict) else None
    return kind if isinstance(kind, str) else None


def gpu_rows(facts: dict[str, Any], unmask: bool) -> list[dict[str, Any]]:
    """One row per device of the facts: serial and UUID shown as the certificate shows them."""
    rows = []
    for position, device in enumerate(_devices(facts)):
        serial, uuid = _text(device.get("serial")), _text(device.get("uuid"))
        rows.append(
            {
                "idx": device.get("index") if isinstance(device.get("index"), int) else position,
                "serial": _shown(serial, unmask),
                "uuid": _shown(uuid, unmask),
                "serial_key": board_key(serial),
                "uuid_key": board_key(uuid),
            }
        )
    return rows


def check_rows(certificate: dict[str, Any], facts: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per check, or one per GPU it names (an Xid check can name several)."""
    by_pci = pci_indexes(facts)
    found = []
    for check in certificate["checks"]:
        row = {"check_id": check["id"], "name": check["name"], "outcome": check["outcome"]}
        message = check.get("message")
        for gpu in gpus_of(check, by_pci) or [None]:
            about = message_about(message, _bus_of(facts, gpu)) if gpu is not None else message
            found.append({**row, "gpu": gpu, "message": first_line(about)})
    return found


def figure_rows(certificate: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "figure": entry["figure"],
            "label": entry.get("label"),
            "measured": float(entry["measured"]),
            "unit": entry.get("unit"),
            "verdict": entry.get("verdict"),
        }
        for check in certificate["checks"]
        for entry in check.get("figures", [])
        if isinstance(entry.get("measured"), int | float)
    ]


def gpu_of(check: dict[str, Any], by_pci: dict[str, int]) -> int | None:
    """The one GPU a check is about, or None: the machine (or several GPUs)."""
    found = gpus_of(check, by_pci)
    return found[0] if len(found) == 1 else None


def gpus_of(check: dict[str, Any], by_pci: dict[str, int]) -> list[int]:
    """The GPUs a check is about: named in its parameters (test_x[gpu3]), by a figure's label
    (gpu3) with the check's own outcome, or by the PCI addresses its message names (the Xid
    check's lines). [] : the machine as a whole."""
    params = check["name"].partition("[")[2]
    found = GPU_PARAM.search(f"[{params}" if params else "")
    if found:
        return [int(found.group(1))]
    labelled = [
        int(label.group(1))
        for entry in check.get("figures", [])
        if entry.get("verdict") == check["outcome"]
        and (label := GPU_PARAM.search(f"[{entry.get('label') or ''}]"))
    ]
    if labelled:
        return sorted(set(labelled))
    named = (by_pci.get(_pci_tail(a)) for a in PCI_ADDRESS.findall(check.get("message") or ""))
    return sorted({index for index in named if index is not None})


def message_about(message: str | None, bus: str | None) -> str | None:
    """The part of a message about one GPU: of "... events: Xid 79 x1 on GPU 0 (bus): ... |
    Xid 48 x2 on GPU 3 (bus): ...", the Xid entry naming that GPU's bus."""
    if not message or not bus:
        return message
    for part in message.split(" | "):
        at = part.lower().find(_pci_tail(bus))
        if at >= 0:
            start = part.rfind("Xid ", 0, at)
            part = part[start:] if start >= 0 else part
            # The Xid check ends its message with notes about every GPU: not this GPU's part.
            return part.split(". Also seen, ")[0].split(". Meanings: ")[0]
    return message


def _bus_of(facts: dict[str, Any], gpu: int) -> str | None:
    for bus, index in pci_indexes(facts).items():
        if index == gpu:
            return bus
    return None


def pci_indexes(facts: dict[str, Any]) -> dict[str, int]:
    """'18:00.0' -> device index: NVML writes 8 domain digits, the kernel log 4."""
    out = {}
    for position, device in enumerate(_devices(facts)):
        pci = device.get("pci") if isinstance(device.get("pci"), dict) else {}
        bus = pci.get("bus_id")
        if isinstance(bus, str):
            out[_pci_tail(bus)] = device.get("index", position)
    return out


def first_line(text: Any) -> str | None:
    if not isinstance(text, str) or not text.strip():
        return None
    return text.strip().splitlines()[0][:MESSAGE_CHARS]


def _pci_tail(address: str) -> str:
    return address.lower().split(":", 1)[1] if address.count(":") == 2 else address.lower()


def _devices(facts: dict[str, Any]) -> list[dict[str, Any]]:
    devices = facts.get("devices")
    return [d for d in devices if isinstance(d, dict)] if isinstance(devices, list) else []


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _shown(value: str | None, unmask: bool) -> str | None:
    if value is None:
        return None
    return value if unmask else mask(value)
