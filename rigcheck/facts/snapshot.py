"""Facts: one JSON snapshot of the machine, read by dotted paths, saved and replayed."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rigcheck.errors import FactsError, FactUnavailable
from rigcheck.facts.probe import ERROR_KEY, is_error
from rigcheck.jsonfile import read_json

SNAPSHOT_KEYS = ("schema_version", "origin", "devices")  # every snapshot has them

if TYPE_CHECKING:  # loaded where a file is validated: `rigcheck facts` never needs it
    import jsonschema

SCHEMA_VERSION = 1
SCHEMA_PATH = Path(__file__).with_name("facts.schema.json")
_MISSING = object()


class Facts:
    """A machine's facts snapshot. `get` raises FactUnavailable for unreadable facts."""

    def __init__(self, data: dict[str, Any]):
        self.data = data

    @property
    def origin(self) -> dict[str, Any]:
        return self.data.get("origin", {})

    def get(self, path: str) -> Any:
        """The value at a dotted path ("devices.0.ecc.current"); fails closed.

        A fact inside an unreadable one (host.cpu.model when host.cpu is an error record)
        fails with the reason the outer one could not be read.
        """
        parts = path.split(".")
        for end in range(1, len(parts) + 1):
            prefix = ".".join(parts[:end])
            value = self.find(prefix, default=_MISSING)
            if value is _MISSING:
                raise FactUnavailable(path, self.missing_reason())
            if is_error(value):
                raise FactUnavailable(prefix, value[ERROR_KEY])
        return value

    def missing_reason(self) -> str:
        """Why a fact is absent: a recorded file may predate it; a live run has no such excuse."""
        if self.origin.get("kind") == "live":
            return "no probe on this machine recorded it (a rigcheck bug: please report it)"
        return "not in the snapshot (recorded by an older rigcheck?)"

    def find(self, path: str, default: Any = None) -> Any:
        """The raw value at a dotted path (possibly an error record), or `default`."""
        exists, value = lookup(self.data, path)
        return value if exists else default

    @property
    def devices(self) -> list[dict[str, Any]]:
        """The accelerators found (NVIDIA, AMD or Apple); empty on a CPU-only host."""
        devices = self.data.get("devices", [])
        return devices if isinstance(devices, list) else []

    def to_json(self) -> str:
        return json.dumps(self.data, indent=2, sort_keys=True) + "\n"

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write atomically, so an interrupted run never leaves half a snapshot."""
        from rigcheck.paths import write_atomic  # a full disk leaves no temporary file

        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, self.to_json())


def lookup(data: Any, path: str) -> tuple[bool, Any]:
    """(exists, value) at a dotted path ('devices.0.ecc.current') in snapshot data."""
    node = data
    for part in path.split("."):
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return False, None
    return True, node


def _deepest(error: jsonschema.ValidationError) -> jsonschema.ValidationError:
    """Into a oneOf that no branch matched, the branch for a value rather than for an error
    record ({"error": reason}): "xid_events is missing" says more than "matches no branch"."""
    import jsonschema

    while error.context:
        values = [e for e in error.context if not _error_record_branch(e)]
        error = jsonschema.exceptions.best_match(values or error.context)
    return error


def _error_record_branch(error: jsonschema.ValidationError) -> bool:
    return error.validator == "required" and ERROR_KEY in error.validator_value


def validate_snapshot(data: Any, source: str) -> None:
    """Check a snapshot against the facts schema; the error names the file and JSON path."""
    import jsonschema

    schema = json.loads(SCHEMA_PATH.read_text())
    first = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(schema).iter_errors(data)
    )
    if first is not None:
        error = _deepest(first)
        path = list(error.absolute_path)
        message = error.message
        if error.validator == "required":  # name the missing field itself, not its parent
            path.append(next(k for k in error.validator_value if k not in error.instance))
            message = "missing (a required field)"
        where = "$" + "".join(f"[{p!r}]" for p in path)
        raise FactsError(f"{source}: invalid facts snapshot at {where}: {message}")
    if data["schema_version"] != SCHEMA_VERSION:
        raise FactsError(
            f"{source}: facts schema version {data['schema_version']}, this rigcheck reads "
            f"version {SCHEMA_VERSION}. Re-record it with `rigcheck facts -o FILE`."
        )


def load_facts(path: str | os.PathLike[str]) -> Facts:
    """Read a recorded snapshot, with an error that says what is wrong instead of a traceback."""
    data = read_json(path, "facts file", FactsError)
    validate_snapshot(data, str(path))
    return Facts(data)
