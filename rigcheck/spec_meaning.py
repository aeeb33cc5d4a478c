"""What the schema cannot say about a spec file: reading it strictly, and checking its meaning.

The JSON schema checks shape. A spec of the right shape can still be wrong in ways that
either pass a broken machine or blame a healthy one: a floor above its datasheet, a NaN
(every comparison with it is False, so nothing fails), a figure name no check reads, a unit
that does not fit the field, a count of 1.5 or 0, a regex that only fails when a check
compiles it. Each problem is one line naming the JSON path, so the loader can refuse it.
"""

from __future__ import annotations

import difflib
import itertools
import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rigcheck.figure_names import EXPECT_UNITS, FIGURE_UNITS

TIERS = ("floor", "achievable", "datasheet")  # in the order their values must rise


class SpecFileUnreadable(ValueError):
    """The file cannot be read as a JSON spec; the message says why, in one line."""


def read_strict(path: Path) -> Any:
    """The parsed spec; refuses what json.loads would let through or crash on.

    json.loads accepts NaN and Infinity (not JSON) and keeps the last of duplicate keys
    (so an edit that adds a second "floor" silently wins); a directory, a UTF-16 or binary
    file raise OSError or UnicodeDecodeError, which a person should see as one line.
    """
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise SpecFileUnreadable("no such spec file") from None
    except IsADirectoryError:
        raise SpecFileUnreadable("is a directory, not a spec file") from None
    except OSError as exc:
        raise SpecFileUnreadable(f"cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise SpecFileUnreadable(
            f"is not UTF-8 text (byte {exc.start}: {exc.reason}); save it as UTF-8 JSON"
        ) from None
    if "\x00" in text:
        raise SpecFileUnreadable("is binary (it holds NUL bytes), not a JSON spec")
    try:
        return json.loads(text, parse_constant=_mark_constant, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        raise SpecFileUnreadable(f"not valid JSON ({where}: {exc.msg})") from None
    except _Refused as exc:
        raise SpecFileUnreadable(str(exc)) from None
    except RecursionError:
        raise SpecFileUnreadable("is nested too deeply to be a spec") from None


class _Refused(ValueError):
    pass


class NonFinite:
    """Where the file says NaN, Infinity or -Infinity: kept as a marker, so the loader can
    refuse it naming its JSON path (parse_constant does not know where it is)."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


def _mark_constant(name: str) -> NonFinite:
    return NonFinite(name)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _Refused(f"key {key!r} appears twice in one object ({_keys(pairs)}): keep one")
        seen[key] = value
    return seen


def _keys(pairs: list[tuple[str, Any]]) -> str:
    names = [key for key, _ in pairs]
    return ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")


def meaning_problems(data: dict[str, Any]) -> list[str]:
    """Every meaning-level problem of a schema-valid spec, each 'at $.path: what is wrong'."""
    problems = _identity(data["identity"], data["backend"])
    expect = data["expect"]
    problems += _gpu_count(expect["gpu_count"], data["backend"])
    if expect.get("tdp") is not None:
        problems += _positive_quantity(expect["tdp"], "$.expect.tdp")
    for key, unit in EXPECT_UNITS.items():
        entry = expect.get(key)
        if isinstance(entry, dict) and entry.get("unit") != unit:
            problems.append(
                f"at $.expect.{key}.unit: {entry.get('unit')!r} does not fit {key}, "
                f"which is always in {unit}"
            )
    problems += _tiers(expect["memory_per_device"], "$.expect.memory_per_device")
    if expect["memory_per_device"].get("floor") is None:
        # The schema lets a figure's floor be null (it fails closed); memory's floor is what
        # every machine is judged against, so a null one would leave the check nothing to read.
        problems.append("at $.expect.memory_per_device.floor: the memory floor must be stated")
    for name, figure in data["figures"].items():
        where = f"$.figures.{name}"
        if name not in FIGURE_UNITS:
            problems.append(f"at {where}: no check measures a figure named {name!r}{_near(name)}")
            continue
        if figure["unit"] != FIGURE_UNITS[name]:
            problems.append(
                f"at {where}.unit: {figure['unit']!r} does not fit {name}, "
                f"which is measured in {FIGURE_UNITS[name]}"
            )
        problems += _tiers(figure, where)
    return problems


def non_finite_problems(data: Any) -> list[str]:
    """Every NaN/Infinity in the file, by JSON path; checked before the schema sees them."""
    return list(_non_finite(data, "$"))


def _non_finite(node: Any, where: str) -> Iterator[str]:
    # 1e999 parses to inf without any NaN/Infinity literal in the file.
    if isinstance(node, NonFinite) or (isinstance(node, float) and not math.isfinite(node)):
        yield f"at {where}: {node!r} is not a finite number; JSON has no NaN or Infinity"
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from _non_finite(value, f"{where}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _non_finite(value, f"{where}[{i}]")


def _identity(identity: dict[str, Any], backend: str) -> list[str]:
    if backend in ("cuda", "rocm") and not identity["pci_device_ids"]:
        # Detection and test_product_matches_class tell a GPU class from its neighbours by
        # PCI id (an H100 SXM from an H100 PCIe); with none, any device of the name would do.
        return ["at $.identity.pci_device_ids: a GPU class must list its PCI device ids"]
    pattern = identity.get("name_pattern")
    if pattern is None:
        return []
    try:
        re.compile(pattern)
    except re.error as exc:
        return [f"at $.identity.name_pattern: {pattern!r} is not a valid regex ({exc})"]
    return []


def _gpu_count(entry: dict[str, Any], backend: str) -> list[str]:
    """A whole number: 0 on a CPU-only class, >= 1 on any other (0 would blame every machine)."""
    value = entry.get("value")
    where = "$.expect.gpu_count"
    if backend == "cpu":
        ok, need = value == 0 and _is_int(value), "0 on a CPU-only class"
    else:
        ok, need = _is_int(value) and value >= 1, "a whole number >= 1"
    problems = [] if ok else [f"at {where}.value: {value!r} is no valid count; it must be {need}"]
    allowed = entry.get("allowed")
    if ok and allowed is not None and value not in allowed:
        problems.append(f"at {where}.allowed: {allowed} leaves out the class's own count {value}")
    return problems


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _positive_quantity(entry: dict[str, Any], where: str) -> list[str]:
    value = entry.get("value")
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return []
    return [f"at {where}.value: {value!r} must be a finite number > 0"]


def _tiers(figure: dict[str, Any], where: str) -> list[str]:
    """floor <= achievable <= datasheet, over the tiers that are stated."""
    stated = [
        (tier, figure[tier]["value"])
        for tier in TIERS
        if isinstance(figure.get(tier), dict) and isinstance(figure[tier].get("value"), int | float)
    ]
    problems = []
    for (low, low_value), (high, high_value) in itertools.pairwise(stated):
        if low_value > high_value:
            problems.append(
                f"at {where}.{low}.value: {low} {low_value} is above {high} {high_value}; "
                f"tiers must rise floor <= achievable <= datasheet"
            )
    return problems


def _near(name: str) -> str:
    close = difflib.get_close_matches(name, FIGURE_UNITS, n=1)
    return f" (did you mean {close[0]!r}?)" if close else f"; known: {', '.join(FIGURE_UNITS)}"
