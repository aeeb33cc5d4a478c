"""Which class is this machine, and is it the class the user named? Pure functions of facts."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from rigcheck.facts import Facts
from rigcheck.facts.probe import ERROR_KEY, is_error
from rigcheck.look_alikes import classless_note, mistaken_for
from rigcheck.spec import Spec, load_all


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


def identity_problems(facts: Facts, spec: Spec, specs: dict[str, Spec] | None = None) -> list[str]:
    """Why this machine is not of the class at all; empty when its devices are the right product.

    A wrong device is named with the class it is of, or the look-alike product it is (specs:
    the classes to look in; default every spec file)."""
    if spec.backend == "cpu":
        if facts.devices:
            found = describe_devices(facts)
            return [f"expected a CPU-only host, found {found}: check it with its own class"]
        return []
    expected = _expected_product(spec)
    if not facts.devices:
        return [f"expected {expected}, found {describe_devices(facts)}"]
    wrong = [d for d in facts.devices if not matches_spec(d, spec)]
    if not wrong:
        return []
    specs = load_all() if specs is None else specs
    return [
        f"GPU {d.get('index')}: expected {expected}, found {describe_device(d)}"
        + mistaken_for(d, spec.name, class_of(d, specs))
        for d in wrong
    ]


def class_of(device: dict[str, Any], specs: dict[str, Spec]) -> str | None:
    """The GPU class this device is of, by its PCI id (or name, for Apple); None when none."""
    return next(
        (n for n, s in specs.items() if s.backend != "cpu" and matches_spec(device, s)), None
    )


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
    notes = dict.fromkeys(filter(None, (classless_note(d) for d in facts.devices)))
    return None, (
        f"{describe_devices(facts)} matches no class in expected/: "
        + "".join(f"{note}. " for note in notes)
        + "name one with -m CLASS, or add a spec file for it"
    )


def expected_gpu_count(spec: Spec, found: int, override: int | None = None) -> int:
    """How many accelerators this machine must have.

    --gpus N when given. Otherwise the count found, when it is one of the node sizes the class
    comes in (spec gpu_count.allowed: an 8-GPU HGX H100 node passes `pytest -m h100` with no
    flag). A count no healthy node of the class has is a node that lost GPUs (7 of 8, 3 of 4):
    it is judged against the next size up, the node it was, and fails. With none found, or more
    than any size, the class's default.
    """
    if override is not None:
        return override
    sizes = spec.allowed_gpu_counts
    if found in sizes:
        return found
    above = [n for n in sizes if n > found]
    return min(above) if found and above else int(spec.expected_value("gpu_count"))
