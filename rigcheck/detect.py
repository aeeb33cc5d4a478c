"""Which class is this machine, and is it the class the user named? Pure functions of facts."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from rigcheck.facts import Facts
from rigcheck.facts.probe import ERROR_KEY, is_error
from rigcheck.spec import Spec


def describe_device(device: dict[str, Any]) -> str:
    """'NVIDIA H100 80GB HBM3 (PCI 0x2330)' — how a device is named in messages."""
    name = device.get("name")
    if is_error(name):
        return f"an unreadable {device.get('vendor', '?')} device ({name[ERROR_KEY]})"
    name = name if isinstance(name, str) else f"{device.get('vendor', '?')} device"
    pci = device.get("pci")
    pci_id = pci.get("device_id") if isinstance(pci, dict) else None
    return f"{name} (PCI {pci_id})" if pci_id else name


def describe_devices(facts: Facts) -> str:
    """'8 x NVIDIA L40S (PCI 0x26B9)', or why no accelerator was found."""
    if not facts.devices:
        return f"no accelerator ({no_device_reason(facts)})"
    counts = Counter(describe_device(d) for d in facts.devices)
    return ", ".join(f"{n} x {what}" for what, n in counts.items())


def no_device_reason(facts: Facts) -> str:
    """Why a machine shows no accelerator: the driver's and torch's own words."""
    reasons = []
    driver = facts.find("software.nvidia_driver", {})
    if isinstance(driver, dict) and (not driver.get("present", True) or "reason" in driver):
        reasons.append(str(driver.get("reason", "no NVIDIA driver")))  # a hand-edited {} too
    torch = facts.find("software.torch", {})
    if isinstance(torch, dict) and "error" in torch:
        reasons.append(f"torch: {torch['error']}")
    elif isinstance(torch, dict) and torch.get("build") == "cpu":
        reasons.append(f"torch {torch.get('version')} is a CPU-only build")
    return "; ".join(reasons) or "none reported"


def matches_spec(device: dict[str, Any], spec: Spec) -> bool:
    """A device is of a class by PCI device id where the class has one, else by name."""
    ids = spec.identity["pci_device_ids"]
    if ids:
        pci = device.get("pci")
        found = pci.get("device_id") if isinstance(pci, dict) else None
        return isinstance(found, str) and found.upper() in {i.upper() for i in ids}
    pattern = spec.identity["name_pattern"]
    name = device.get("name")
    return bool(pattern) and isinstance(name, str) and re.search(pattern, name) is not None


def identity_problems(facts: Facts, spec: Spec) -> list[str]:
    """Why this machine is not of the class at all; empty when its devices are the right product."""
    if spec.backend == "cpu":
        if facts.devices:
            found = describe_devices(facts)
            return [f"expected a CPU-only host, found {found}: check it with its own class"]
        return []
    expected = _expected_product(spec)
    if not facts.devices:
        return [f"expected {expected}, found {describe_devices(facts)}"]
    wrong = [d for d in facts.devices if not matches_spec(d, spec)]
    return [f"GPU {d.get('index')}: expected {expected}, found {describe_device(d)}" for d in wrong]


def _expected_product(spec: Spec) -> str:
    ids = ", ".join(spec.identity["pci_device_ids"])
    return f"{spec.title}" + (f" (PCI {ids})" if ids else "")


def detect_class(facts: Facts, specs: dict[str, Spec]) -> tuple[str | None, str]:
    """(class, how it was decided), or (None, why no class fits)."""
    if not facts.devices:
        return "cpu", f"no accelerator found ({no_device_reason(facts)})"
    for name, spec in specs.items():
        if spec.backend != "cpu" and all(matches_spec(d, spec) for d in facts.devices):
            return name, f"{describe_devices(facts)} matches expected/{name}.json"
    return None, (
        f"{describe_devices(facts)} matches no class in expected/: "
        "name one with -m CLASS, or add a spec file for it"
    )
