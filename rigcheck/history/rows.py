"""A run's certificate (and the unmasked facts) as rows of the store's tables."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from rigcheck.reports.masking import mask

GPU_PARAM = re.compile(r"(?:^|[\[\-_ ])gpu(\d+)(?:$|[\]\-_ ])")
PCI_ADDRESS = re.compile(r"\b[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]\b")
MESSAGE_CHARS = 500


def board_key(value: str | None) -> str | None:
    """A fixed-length digest of a full serial or UUID: finds one board again across runs without
    keeping the number itself. Serials are short numbers, so this hides them from a casual
    reader, not from someone who tries every serial: the store is as private as its folder."""
    if not value or not isinstance(value, str):
        return None
    return hashlib.sha256(f"rigcheck-board:{value.strip()}".encode()).hexdigest()


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
        "tier": run.get("tier") or certificate.get("tier"),
        "verdict": certificate["verdict"],
        "exit_status": certificate.get("exit_status"),
        "started_at": run["started_at"],
        "certificate": json.dumps(certificate, sort_keys=True),
    }


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
    by_pci = pci_indexes(facts)
    return [
        {
            "check_id": check["id"],
            "name": check["name"],
            "outcome": check["outcome"],
            "gpu": gpu_of(check, by_pci),
            "message": first_line(check.get("message")),
        }
        for check in certificate["checks"]
    ]


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
    """The GPU a check is about: named in its parameters (test_x[gpu3]), by a failing figure's
    label (gpu3), or by the PCI address its message names (an Xid line). None: the machine."""
    params = check["name"].partition("[")[2]
    found = GPU_PARAM.search(f"[{params}" if params else "")
    if found:
        return int(found.group(1))
    for entry in check.get("figures", []):
        label = GPU_PARAM.search(f"[{entry.get('label') or ''}]")
        if label and entry.get("verdict") == check["outcome"]:
            return int(label.group(1))
    for address in PCI_ADDRESS.findall(check.get("message") or ""):
        index = by_pci.get(_pci_tail(address))
        if index is not None:
            return index
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
