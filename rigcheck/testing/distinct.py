"""Distinct values through a simulated library: every number of an answer different from every
other, so a probe that reads one field where its neighbour was meant cannot pass.

The simulators' profiles are real captures, and on a healthy machine the fields a probe could
confuse hold the same value (both ECC counts 0, the PCIe link at its maximum width, the power
limit at its default). Here a profile's numeric leaves are replaced by distinct values drawn by
hypothesis; `equal_pairs` names the pairs of fields a profile leaves equal.

Paths are tuples of keys into a profile dict. A leaf that is None (the board answers
NOT_SUPPORTED) stays None: distinct values never make a board answer what it does not.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

Path = tuple[str, ...]


def get(tree: Any, path: Path) -> Any:
    """The value at `path`, or None when any part of it is missing."""
    for key in path:
        if not isinstance(tree, dict) or key not in tree:
            return None
        tree = tree[key]
    return tree


def put(tree: dict[str, Any], path: Path, value: Any) -> None:
    for key in path[:-1]:
        tree = tree[key]
    tree[path[-1]] = value


def numbers(tree: Any, under: Path = ()) -> Iterator[Path]:
    """The paths of the int leaves (not bools) in a nested dict, in a fixed order."""
    if isinstance(tree, dict):
        for key in sorted(tree):
            yield from numbers(tree[key], (*under, key))
    elif isinstance(tree, int) and not isinstance(tree, bool):
        yield under


def with_values(tree: dict[str, Any], paths: list[Path], values: list[int]) -> dict[str, Any]:
    """A copy of `tree` with paths[i] set to values[i]."""
    out = copy.deepcopy(tree)
    for path, value in zip(paths, values, strict=True):
        put(out, path, value)
    return out


def equal_pairs(tree: dict[str, Any], pairs: list[tuple[Path, Path]]) -> list[str]:
    """The pairs of fields a profile leaves equal, where a probe swapping them would not show:
    'a = b = value' for each. Fields the board does not answer (None) are not compared."""
    found = []
    for a, b in pairs:
        va, vb = get(tree, a), get(tree, b)
        if va is not None and vb is not None and _same(va, vb):
            found.append(f"{'.'.join(a)} = {'.'.join(b)} = {va!r}")
    return found


def _same(a: Any, b: Any) -> bool:
    """Lists (retired page addresses) count by length: the probe reports how many."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b)
    return a == b


def swapped(module: Any, function: str, a: str, b: str) -> Callable[..., dict]:
    """A probe's reader `function` of `module`, with the facts `a` and `b` of its answer swapped:
    the bug a round-trip test must catch."""
    real = getattr(module, function)

    def read(*args: Any) -> dict:
        out = dict(real(*args))
        out[a], out[b] = out[b], out[a]
        return out

    return read
