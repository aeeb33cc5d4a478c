"""Type-level mutations of one fact in a snapshot, and whether a replay judged them right.

The property tests (tests/replay/test_fact_mutations.py) and the fuzz (rigcheck.testing.fuzz)
take a class's good snapshot, break one fact a check judges (its path recorded by the typed
accessor while the good snapshot was replayed), replay the suite, and sort the outcome:
a failure naming the fact (or a usage error naming the field) is right; a pass, a crash
inside a check, or an INTERNALERROR is wrong.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from rigcheck.facts import typed
from rigcheck.facts.fact_type import problem
from rigcheck.facts.snapshot import lookup

_DELETE = object()
# The shapes seen in real snapshots edited by hand or written by other tools (issue 10).
MUTATIONS: dict[str, Any] = {
    "null": None,
    "N/A": "N/A",
    "[Not Supported]": "[Not Supported]",
    "Enabled": "Enabled",
    "'16'": "16",
    "[]": [],
    "{}": {},
    "deleted": _DELETE,
    "wrong-typed number": "wrong-typed number",  # resolved per declared kind below
}
# A number of the wrong kind for each declared kind: a bool is not a count, 2.5 is no count.
WRONG_NUMBER = {"bool": 1, "count": 2.5, "number": True}

GOOD, USAGE, WRONG_PASS, UNNAMED, EXCEPTION, INTERNALERROR = (
    "failed naming the fact",
    "usage error naming the field",
    "wrong pass",
    "failed without naming the fact",
    "exception",
    "INTERNALERROR",
)
CRASH_MARK = "could not judge ("  # rigcheck/plugin/check_crash.py's words for a check that raised


def mutated_value(name: str, path: str) -> Any:
    value = MUTATIONS[name]
    if name == "wrong-typed number":
        return WRONG_NUMBER.get(typed.declared(path).kind, 16)
    return value


def breaks(path: str, name: str, snapshot: Any) -> bool:
    """Whether this mutation makes the fact unfit to judge: a value of its declared type is
    a different machine, not a broken fact (e.g. "16" is a fine product name)."""
    exists, before = lookup(snapshot, path)
    if not exists:
        return False
    if name == "deleted":
        return True
    value = mutated_value(name, path)
    if value == before and type(value) is type(before):
        return False
    return problem(value, typed.declared(path)) is not None


def mutate(snapshot: dict[str, Any], path: str, name: str) -> dict[str, Any]:
    """A copy of the snapshot with one fact replaced (or deleted)."""
    broken = copy.deepcopy(snapshot)
    *parents, last = path.split(".")
    node: Any = broken
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    key = int(last) if isinstance(node, list) else last
    if name == "deleted":
        del node[key]
    else:
        node[key] = copy.deepcopy(mutated_value(name, path))
    return broken


def names_fact(text: str, path: str, snapshot: dict[str, Any]) -> bool:
    """Whether a failure message names this fact (or a fact inside it).

    Device facts are named "ecc.current of GPU 0 (bus)" (rigcheck.require.gpu_label, NVML's
    index); every other fact by its dotted path.
    """
    parts = path.split(".")
    if parts[0] == "devices" and len(parts) > 2:
        index = snapshot["devices"][int(parts[1])].get("index")
        rest = re.escape(".".join(parts[2:]))
        return re.search(rf"{rest}(\.[\w.]+)? of GPU {index}\b", text) is not None
    return re.search(rf"{re.escape(path)}(\.[\w.]+)?\b", text) is not None


def json_path(path: str) -> str:
    """'devices.0.index' -> "$['devices'][0]['index']", as a snapshot usage error writes it."""
    return "$" + "".join(f"[{p}]" if p.isdigit() else f"[{p!r}]" for p in path.split("."))


def classify(
    ret: int,
    failed: dict[str, str],
    errors: dict[str, str],
    output: str,
    path: str,
    snapshot: dict[str, Any],
) -> str:
    """Sort one replay of a snapshot whose fact at `path` was broken."""
    if ret == 3 or "INTERNALERROR" in output:
        return INTERNALERROR
    if errors or any(CRASH_MARK in text for text in failed.values()):
        return EXCEPTION
    if ret == 4:
        return USAGE if json_path(path) in output else UNNAMED
    if any(names_fact(text, path, snapshot) for text in failed.values()):
        return GOOD
    return UNNAMED if failed else WRONG_PASS
