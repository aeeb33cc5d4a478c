"""What kind of value a judged fact must be, and what makes a value unfit to judge.

typed.py declares every judged fact as one of these; require.py asks problem() before a check
sees the value. Pure: no probes, no pytest.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

# What tools print where they have no value: never a value a check may judge.
PLACEHOLDERS = {
    "",
    "n/a",
    "[n/a]",
    "na",
    "none",
    "null",
    "unknown",
    "[unknown error]",
    "not supported",
    "[not supported]",
    "[insufficient permissions]",
    "[gpu is lost]",
}
VERSION = re.compile(r"^\d+(\.\d+)*([+~-][0-9A-Za-z.+~-]*)?$")


@dataclass(frozen=True)
class FactType:
    """One judged leaf: its kind, unit, why a check needs it and how to read it by hand."""

    kind: str  # bool | count | number | text | version | list | object | choice
    why: str
    unit: str = ""
    nullable: bool = False  # None is a real value (e.g. no nvcc installed), not "not read"
    empty_ok: bool = True  # for lists: an empty list is a real answer (no processes)
    choices: tuple[str, ...] = ()
    items: str = ""  # for lists: the kind of every item ("text", "object")

    def expected(self) -> str:
        """'a boolean', 'a count in bytes', 'one of cuda, rocm, cpu' — for messages."""
        words = {
            "bool": "a boolean (true/false)",
            "count": "a whole number >= 0",
            "number": "a finite number >= 0",
            "text": "a non-empty string",
            "version": "a version string like '12.4'",
            "list": "a list" + ("" if self.empty_ok else " (not empty)"),
            "object": "an object",
            "choice": "one of " + ", ".join(self.choices),
        }[self.kind]
        if self.kind == "list" and self.items:
            words += f" of {self.items} values"
        return words + (f" in {self.unit}" if self.unit else "")


def problem(value: Any, ftype: FactType) -> str | None:
    """What makes a value unfit to judge as this type; None when it is fit."""
    if value is None:
        return None if ftype.nullable else "null"
    kind = ftype.kind
    if kind == "bool":
        return None if isinstance(value, bool) else "not a boolean"
    if kind in ("count", "number"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return "not a number"
        if kind == "count" and not (isinstance(value, int) or float(value).is_integer()):
            return "not a whole number"  # 16.0 (a JSON writer's integer) is still sixteen
        if not math.isfinite(value) or value < 0:
            return "out of range"
        return None
    if kind in ("text", "version", "choice"):
        if not isinstance(value, str):
            return "not a string"
        if kind == "choice" and value in ftype.choices:
            return None  # a declared answer ("none": no hypervisor) is never a placeholder
        if value.strip().lower() in PLACEHOLDERS:
            return "a placeholder, not a value"
        if kind == "version" and not VERSION.match(value):
            return "not a version"
        if kind == "choice" and value not in ftype.choices:
            return "not one of the known values"
        return None
    if kind == "list":
        if not isinstance(value, list):
            return "not a list"
        if not value and not ftype.empty_ok:
            return "empty"
        bad = [v for v in value if ftype.items and problem(v, FactType(ftype.items, ""))]
        return f"has an item that is {problem(bad[0], FactType(ftype.items, ''))}" if bad else None
    if kind == "object":
        if not isinstance(value, dict):
            return "not an object"
        return None if value else "empty"
    raise ValueError(f"unknown fact kind {kind!r}")
