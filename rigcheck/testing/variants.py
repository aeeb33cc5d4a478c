"""Broken variants: declarative edits that turn a good facts snapshot into a broken one.

fixtures/broken_variants.json lists them. Each names the classes it applies to, the edits to
make, the checks that must then fail and a substring their failure messages must contain;
tests/replay runs the real suites on every (class, variant) pair. Edits address a snapshot by
dotted path, as Facts.get does, with `*` for every item of a list:

    {"set": "devices.*.ecc.current", "to": false}        every device
    {"set": "devices.0.processes", "to": [...]}          device 0 only
    {"scale": "devices.0.power.limit_w", "by": 0.6}      a number times a factor
    {"add": "topology.pairs.0.nvlink.links", "by": -1}   a number plus an amount
    {"remove": "devices.7"}                              a list item or a key

An edit with a `when` condition is made only on the classes that meet it.

A fabric fault needs a fabric to break and a fabric to expect, which class snapshots and specs
do not have (rigcheck/plugin/fabric.py): such a variant names both, as files in the
checkout, and is replayed with --fabric:

    "fabric": {"facts": "fixtures/fabric/hgx-h100-8x-ndr.json", "spec": "docs/fabric/dgx-h100.json"}

Conditions (`applies_to`, and `when` on a failure that only some classes see) test the spec:
{"backends": [...], "vendors": [...], "classes": [...], "spec": {path: test}}, where a test is a
value to equal, or {"min": x}, {"below": x}, {"not": x} (versions like "8.0" compare as numbers).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rigcheck.spec import Spec

REPO = Path(__file__).resolve().parents[2]
VARIANTS_PATH = REPO / "fixtures" / "broken_variants.json"


class VariantError(ValueError):
    """A variant that cannot be applied as written: a path the snapshot does not have."""


@dataclass(frozen=True)
class Failure:
    """A check that must fail, and what its message must say."""

    test: str  # the test's name as pytest reports it, parameters included
    message: str


@dataclass(frozen=True)
class Variant:
    name: str
    description: str
    applies_to: dict[str, Any]
    changes: list[dict[str, Any]]
    fails: list[Any]
    message: str
    gpus: int | None = None  # build the good snapshot with N devices and run with --gpus N
    snapshot_of: str | None = None  # start from another class's good snapshot
    fabric: dict[str, str] | None = None  # {"facts": fabric section file, "spec": --fabric file}

    def applies(self, spec: Spec) -> bool:
        # A fault of an N-GPU node applies only to a class sold in N-GPU nodes (a 4-GPU
        # Grace-Blackwell tray is never an 8-GPU node).
        if self.gpus is not None and self.gpus not in spec.allowed_gpu_counts:
            return False
        return matches(self.applies_to, spec)

    def failures(self, spec: Spec) -> list[Failure]:
        """The checks that must fail on this class: plain names, or those whose `when` holds."""
        out = []
        for entry in self.fails:
            entry = {"test": entry} if isinstance(entry, str) else entry
            if matches(entry.get("when", {}), spec):
                out.append(Failure(entry["test"], entry.get("message", self.message)))
        return out

    def apply(self, snapshot: dict[str, Any], spec: Spec) -> dict[str, Any]:
        """A broken copy of a good snapshot of this class; the original is left as it was."""
        if self.fabric:  # the healthy fabric first, so the edits break a fabric that is there
            facts = json.loads((REPO / self.fabric["facts"]).read_text())
            snapshot = {**snapshot, "fabric": facts}
        changes = [c for c in self.changes if matches(c.get("when", {}), spec)]
        return apply_changes(
            snapshot, [{k: v for k, v in c.items() if k != "when"} for c in changes]
        )

    def pytest_args(self) -> list[str]:
        """What the replay adds to `-m CLASS --facts=FILE`: --gpus N, --fabric FILE."""
        args = ["--gpus", str(self.gpus)] if self.gpus else []
        if self.fabric:
            args.append(f"--fabric={REPO / self.fabric['spec']}")
        return args


def load_variants(path: Path = VARIANTS_PATH) -> list[Variant]:
    """The variants in PATH: by default the clone's fixtures/broken_variants.json, which an
    installed wheel does not have (fixtures/ is data beside the package, not in it)."""
    if not Path(path).is_file():
        raise VariantError(
            f"{path}: no variants file. fixtures/ comes with a clone of rigcheck, not with its "
            "wheel: pass your own file, load_variants(path)"
        )
    return [Variant(**entry) for entry in json.loads(Path(path).read_text())]


def matches(condition: dict[str, Any], spec: Spec) -> bool:
    """Whether a class meets every part of a condition; an empty condition is always met."""
    checks = {
        "backends": lambda allowed: spec.backend in allowed,
        "vendors": lambda allowed: spec.vendor in allowed,
        "classes": lambda allowed: spec.name in allowed,
        "spec": lambda tests: all(_test(_lookup(spec.data, p), t) for p, t in tests.items()),
    }
    unknown = set(condition) - set(checks)
    if unknown:
        raise VariantError(f"unknown condition {sorted(unknown)}; known: {sorted(checks)}")
    return all(checks[key](value) for key, value in condition.items())


def _lookup(data: Any, path: str) -> Any:
    node = data
    for part in path.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def _test(value: Any, test: Any) -> bool:
    if not isinstance(test, dict):
        return value == test
    (op, operand), *rest = test.items()
    if rest or op not in {"min", "below", "not"}:
        raise VariantError(f"a test is a value, or one of min/below/not: {test!r}")
    if op == "not":
        return value != operand
    if value is None:
        return False
    if op == "min":
        return _ordered(value) >= _ordered(operand)
    return _ordered(value) < _ordered(operand)


def _ordered(value: Any) -> Any:
    """Numbers as they are; version strings ("8.9", "10.0") as tuples of numbers."""
    if isinstance(value, str):
        return tuple(int(p) for p in value.split("."))
    return value


def apply_changes(snapshot: dict[str, Any], changes: list[dict[str, Any]]) -> dict[str, Any]:
    """A broken copy of the snapshot; the original is left as it was."""
    broken = copy.deepcopy(snapshot)
    for change in changes:
        _apply(broken, change)
    return broken


EDITS = {"set": "to", "scale": "by", "add": "by", "remove": None}  # each verb and its argument


def _apply(snapshot: dict[str, Any], change: dict[str, Any]) -> None:
    op, path, arg = _parse(change)
    *parents, last = path.split(".")
    for container in _walk(snapshot, parents, path):
        _check_exists(container, last, path)
        key = _key(container, last)
        if op == "set":
            container[key] = copy.deepcopy(arg)
        elif op == "scale":
            container[key] = round(container[key] * arg, 3)
        elif op == "add":
            container[key] += arg
        else:
            del container[key]


def _parse(change: dict[str, Any]) -> tuple[str, str, Any]:
    for op, arg in EDITS.items():
        if op in change and set(change) == {op, arg} - {None}:
            return op, change[op], change.get(arg)
    raise VariantError(f"an edit is set+to, scale+by, add+by or remove: {change!r}")


def _walk(node: Any, parts: list[str], path: str) -> list[Any]:
    """Every container the path's parent parts lead to (`*` fans out over a list)."""
    nodes = [node]
    for part in parts:
        step = []
        for n in nodes:
            if part == "*" and isinstance(n, list):
                step.extend(n)
            else:
                _check_exists(n, part, path)
                step.append(n[_key(n, part)])
        nodes = step
    return nodes


def _key(container: Any, part: str) -> Any:
    return int(part) if isinstance(container, list) else part


def _check_exists(container: Any, part: str, path: str) -> None:
    """Edits only touch what the snapshot has: a mistyped path is an error, not a new key."""
    if isinstance(container, list):
        ok = part.isdigit() and int(part) < len(container)
    else:
        ok = isinstance(container, dict) and part in container
    if not ok:
        raise VariantError(f"{path}: the snapshot has no {part!r} here ({_kind(container)})")


def _kind(node: Any) -> str:
    if isinstance(node, list):
        return f"a list of {len(node)}"
    if isinstance(node, dict):
        return f"keys {sorted(node)}"
    return repr(node)
