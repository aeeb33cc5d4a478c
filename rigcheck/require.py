"""How checks read facts: fail closed on unreadable facts, skip what does not apply."""

from __future__ import annotations

from typing import Any, NoReturn

import pytest

from rigcheck.errors import FactUnavailable
from rigcheck.facts import Facts, typed
from rigcheck.facts.fact_type import FactType, problem
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


def fact(facts: Facts, path: str) -> Any:
    """A fact of its declared type (rigcheck/facts/typed.py); anything else fails the check.

    None comes back only where the type declares it a real answer (no nvcc installed).
    """
    ftype = typed.declared(path)
    typed.note_read(path)
    value = _walk(facts.data, path.split("."), path, where="")
    return _typed(value, ftype, path, "", typed.how_to_read(path))


def device_fact(devices: list[dict], path: str, required: bool = False) -> list[tuple[dict, Any]]:
    """(device, value) of one per-device fact ("ecc.current"), typed, for every device."""
    return [(device, device_value(device, path, required)) for device in devices]


def device_value(device: dict, path: str, required: bool = False) -> Any:
    """One device's fact, of its declared type; anything else fails the check naming it.

    None is what the NVML probe stores where the device or driver does not support a read
    (NVML's NotSupported): it comes back as None, or fails with that reason when `required`.
    Below that first key a null is judged by the declared type like any other value.
    """
    ftype = typed.declared(f"devices.*.{path}")
    where = f" of {gpu_label(device)}"
    vendor = device.get("vendor")
    first, *rest = path.split(".")
    index = device.get("index")
    typed.note_read(f"devices.{index}.{path}", None if required else f"devices.{index}.{first}")
    top = _walk(device, [first], path, where)
    if top is None:
        if required:
            _unsupported(path, first, where, vendor, _mig_on(device))
        return None
    value = _walk(top, rest, path, where, walked=[first]) if rest else top
    return _typed(value, ftype, path, where, typed.how_to_read("devices", vendor))


def device_values(devices: list[dict], key: str, required: bool = False) -> list[tuple[dict, Any]]:
    """Kept for checks outside suites/facts; the same as device_fact."""
    return device_fact(devices, key, required=required)


def _walk(node: Any, parts: list[str], path: str, where: str, walked: list | None = None) -> Any:
    """Follow a dotted path, failing closed at a missing key, an error record or a wrong shape."""
    walked = list(walked or [])
    for part in parts:
        if is_error(node):
            _cannot(path, where, f"could not be read: {node[ERROR_KEY]}", walked)
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, (dict, list)):
            _cannot(
                path,
                where,
                f"is missing ({'.'.join([*walked, part])} is not in the snapshot: "
                "recorded by an older rigcheck, or edited by hand?)",
                [],
            )
        else:
            shape = "a list" if part.isdigit() else "an object"
            _cannot(path, where, f"is {node!r}, expected {shape}", walked)
        walked.append(part)
    if is_error(node):
        _cannot(path, where, f"could not be read: {node[ERROR_KEY]}", walked)
    return node


def _typed(value: Any, ftype: FactType, path: str, where: str, how: str) -> Any:
    """The value when it has its declared type; else the check fails naming it and `how` to
    read it by hand."""
    wrong = problem(value, ftype)
    if wrong is not None:
        _cannot(
            path,
            where,
            f"is {value!r} ({wrong}), expected {ftype.expected()}: it says {ftype.why}. {how}",
            [],
        )
    return value


def _cannot(path: str, where: str, what: str, container: list[str]) -> NoReturn:
    inner = f": {'.'.join(container)}" if container and ".".join(container) != path else ""
    pytest.fail(f"cannot judge: {path}{where}{inner} {what}", pytrace=False)


def _unsupported(path: str, key: str, where: str, vendor: str | None, mig: bool) -> NoReturn:
    if mig:  # the cause is on this machine, not a guest: telegraf's A100 with MIG on reads
        # remapped rows N/A (fixtures/nvidia_smi/telegraf-a100-sxm4-v12.xml)
        pytest.fail(
            f"cannot judge: {path}{where}: {key} is not supported while MIG mode is on (NVML: "
            "Not Supported). This class needs it: turn MIG off (`nvidia-smi -mig 0`, then "
            "reset the GPU) and check again.",
            pytrace=False,
        )
    said = (
        "amdsmi: NOT_SUPPORTED), as in an SR-IOV guest"
        if vendor == "amd"
        else ("NVML: Not Supported), as in a vGPU guest")
    )
    pytest.fail(
        f"cannot judge: {path}{where}: {key} is not supported by this device or driver "
        f"({said}. This class needs it: run on bare metal or GPU passthrough, or upgrade the "
        "driver.",
        pytrace=False,
    )


def _mig_on(device: dict) -> bool:
    mig = device.get("mig")
    return isinstance(mig, dict) and mig.get("current") is True


def shown(device: dict, path: str) -> str:
    """A fact that only adds context to a message (the default power limit): never judged."""
    node: Any = device
    for part in path.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return str(node) if isinstance(node, (int, float, str)) and not isinstance(node, bool) else "?"


def gpu_label(device: dict) -> str:
    """'GPU 0 (0000:18:00.0)': NVML's index (nvidia-smi's), which CUDA_VISIBLE_DEVICES does not
    renumber, and the PCI address. torch's own index is written cuda:N (see cuda_label)."""
    pci = device.get("pci")
    bus = pci.get("bus_id") if isinstance(pci, dict) else None
    return f"GPU {device.get('index')}" + (f" ({bus})" if bus else "")


def cuda_label(facts: Facts, index: int) -> str:
    """'cuda:0 (0000:18:00.0)': torch's index, which CUDA_VISIBLE_DEVICES renumbers (cuda:0 may
    be NVML's GPU 3), with the PCI address that ties it to gpu_label's GPU n."""
    bus = facts.find(f"software.torch.devices.{index}.pci_bus_id")
    return f"cuda:{index}" + (f" ({bus})" if isinstance(bus, str) else "")


def version_tuple(version: str) -> tuple[int, ...]:
    """'535.104.05' -> (535, 104, 5); compares as numbers, not text."""
    return tuple(int(part) for part in version.split(".") if part.isdigit())
