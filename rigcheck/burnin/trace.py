"""The burn-in trace: plain JSON with a schema version, saved in the run's report folder.

A trace is what every device did during a burn-in (telemetry columns, GEMM windows, the memory
test, counters before and after, Xid events). Live runs write one; `--burn-in-trace=FILE`
judges a saved or synthetic one through the same checks, as `--facts` replays a snapshot.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

from rigcheck.errors import RigcheckError
from rigcheck.jsonfile import read_json

SCHEMA_VERSION = 1
KIND = "rigcheck-burnin-trace"
SCHEMA_FILE = Path(__file__).with_name("trace.schema.json")
FILE_NAME = "burnin-trace.json"  # in the run's report folder


class BurnInError(RigcheckError):
    """A burn-in could not run, or a trace cannot be read."""


def load_trace(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A validated trace; BurnInError says in one line what is wrong and how to get a good one."""
    data = read_json(path, "burn-in trace", BurnInError)
    if isinstance(data, dict) and data.get("schema_version") not in (None, SCHEMA_VERSION):
        raise BurnInError(
            f"{path}: trace schema_version {data.get('schema_version')!r}, this rigcheck reads "
            f"{SCHEMA_VERSION}: record it again with this version "
            "(rigcheck check CLASS --burn-in=60s)"
        )
    problem = trace_problem(data)
    if problem:
        raise BurnInError(
            f"{path}: not a rigcheck burn-in trace ({problem}). Record one with "
            "`rigcheck check CLASS --burn-in=60s`, or write one: `python -m "
            "rigcheck.testing.synthetic_trace`"
        )
    return data


def trace_problem(data: Any) -> str | None:
    """The first schema problem, or None; equal column lengths are checked too."""
    error = jsonschema.exceptions.best_match(_validator().iter_errors(data))
    if error is not None:
        where = "$" + "".join(
            f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path
        )
        return f"at {where}: {error.message}"
    for device in data["devices"]:
        for block in ("samples", "windows"):
            lengths = {k: len(v) for k, v in device[block].items() if isinstance(v, list)}
            if len(set(lengths.values())) > 1:
                return f"device {device['id']}: {block} columns differ in length {lengths}"
            for column, values in device[block].items():
                wrong = _first_wrong(values, COLUMN_TYPES.get(column, _number_or_null))
                if wrong is not None:
                    return f"device {device['id']}: {block}.{column}[{wrong}] is {values[wrong]!r}"
    return None


# Checked here rather than item by item in the schema: a one-hour, 8-GPU trace has ~10^6
# readings, which jsonschema takes seconds to walk and a plain loop a fraction of one.
def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _number_or_null(v: Any) -> bool:
    return v is None or _number(v)


def _count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _reasons(v: Any) -> bool:
    return v is None or (isinstance(v, list) and all(isinstance(r, str) for r in v))


COLUMN_TYPES = {
    "t_s": _number,
    "tflops": _number,
    "checksum": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "checks": _count,
    "mismatches": _count,
    "reasons": _reasons,
}


def _first_wrong(values: list[Any], ok: Any) -> int | None:
    return next((i for i, v in enumerate(values) if not ok(v)), None)


def save_trace(path: str | os.PathLike[str], trace: dict[str, Any]) -> None:
    """Written whole to a temporary file, then renamed: a crash never leaves half a trace."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(trace, separators=(",", ":")) + "\n")
    tmp.replace(path)


@cache
def _validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA_FILE.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def phase(trace: dict[str, Any], name: str) -> tuple[float, float] | None:
    """(start, end) seconds of a phase, or None when the trace has none of that name."""
    for p in trace["phases"]:
        if p["name"] == name:
            return float(p["start_s"]), float(p["end_s"])
    return None
