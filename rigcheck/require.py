"""How checks read facts: fail closed on unreadable facts, skip what does not apply."""

from __future__ import annotations

from typing import Any

import pytest

from rigcheck.errors import FactUnavailable
from rigcheck.facts import Facts
from rigcheck.facts.probe import ERROR_KEY, is_error
from rigcheck.spec import Spec


def require(facts: Facts, path: str) -> Any:
    """A fact the check needs; a fact that could not be read fails the check with its reason."""
    try:
        return facts.get(path)
    except FactUnavailable as exc:
        problem = exc
    pytest.fail(f"cannot check: {problem}", pytrace=False)


def expected(spec: Spec, key: str) -> Any:
    """The class's expectation; checks of what the class does not have are skipped with why."""
    value = spec.expected_value(key) if key in spec.data["expect"] else None
    if value is None:
        pytest.skip(f"{key.replace('_', ' ')} does not apply to {spec.name} ({spec.title})")
    return value


def needs_backend(spec: Spec, *backends: str) -> None:
    """Skip checks that belong to another kind of machine (an Apple check on an H100)."""
    if spec.backend not in backends:
        pytest.skip(f"only for {'/'.join(backends)} classes; {spec.name} is {spec.backend}")


def device_values(devices: list[dict], key: str, required: bool = False) -> list[tuple[dict, Any]]:
    """(device, value) for one per-device fact; an unreadable value on any device fails closed.

    None is what a probe stores where the device does not support the read (NVML's
    NotSupported); `required` fails on it too, for checks that have nothing to judge without it.
    """
    pairs = []
    for device in devices:
        value = device.get(key, {ERROR_KEY: "not in the snapshot"})
        if is_error(value):
            pytest.fail(
                f"cannot check: GPU {device.get('index')} {key} could not be read: "
                f"{value[ERROR_KEY]}",
                pytrace=False,
            )
        if required and value is None:
            pytest.fail(
                f"cannot check: GPU {device.get('index')} {key} is not supported by this "
                "device or driver (NVML: Not Supported), as in a vGPU guest. This class needs "
                "it: run on bare metal or GPU passthrough, or upgrade the driver.",
                pytrace=False,
            )
        pairs.append((device, value))
    return pairs


def gpu_label(device: dict) -> str:
    pci = device.get("pci")
    bus = pci.get("bus_id") if isinstance(pci, dict) else None
    return f"GPU {device.get('index')}" + (f" ({bus})" if bus else "")


def version_tuple(version: str) -> tuple[int, ...]:
    """'535.104.05' -> (535, 104, 5); compares as numbers, not text."""
    return tuple(int(part) for part in version.split(".") if part.isdigit())
