"""Spec: what a device class promises, read from expected/<class>.json and validated."""

from __future__ import annotations

import hashlib
import json
import os
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rigcheck.errors import SpecError, UnknownClassError
from rigcheck.layout import SPEC_DIR
from rigcheck.spec_meaning import (
    SpecFileUnreadable,
    meaning_problems,
    non_finite_problems,
    read_strict,
)

if TYPE_CHECKING:  # loaded where a file is validated: `rigcheck facts` never needs it
    import jsonschema

SCHEMA_FILE = SPEC_DIR / "spec.schema.json"  # the schema always comes from the checkout
GIB = 2**30


EXPECTED_ENV = "RIGCHECK_EXPECTED_DIR"


def spec_dir() -> Path:
    """Where the spec files are: expected/, or $RIGCHECK_EXPECTED_DIR for a private set. A
    setting that names no folder of spec files is an error: read as an empty set, it made every
    class unknown ("Known classes: " and nothing after) with no word of the setting."""
    given = os.environ.get(EXPECTED_ENV, "").strip()
    if not given:
        return SPEC_DIR
    folder = Path(given).expanduser()
    if not folder.is_dir() or not any(folder.glob("*.json")):
        what = "holds no spec file (CLASS.json)" if folder.is_dir() else "is no folder"
        raise SpecError(
            f"${EXPECTED_ENV}={given} {what}: point it at a folder of spec files (a copy of "
            "expected/, with your own), or unset it to use the shipped ones"
        )
    return folder


class Spec:
    """One device class's spec file, validated; `expect(key)` and `figure(key)` read it."""

    def __init__(self, data: dict[str, Any], path: Path):
        self.data = data
        self.path = path

    @property
    def name(self) -> str:
        return self.data["class"]

    @property
    def title(self) -> str:
        return self.data["title"]

    @property
    def backend(self) -> str:
        return self.data["backend"]

    @property
    def vendor(self) -> str:
        return self.data["vendor"]

    @property
    def identity(self) -> dict[str, Any]:
        return self.data["identity"]

    def expect(self, key: str) -> Any:
        """A facts expectation; None means it does not apply to this class."""
        return self.data["expect"][key]

    def expected_value(self, key: str) -> Any:
        """The bare value of a {value, source} expectation, or None when it does not apply."""
        entry = self.expect(key)
        return None if entry is None else entry["value"]

    @property
    def memory_bytes(self) -> int:
        """The memory per device a machine of this class is guaranteed to have (the floor)."""
        floor = self.expect("memory_per_device")["floor"]["value"]
        return int(floor * GIB)

    @property
    def allowed_gpu_counts(self) -> list[int]:
        """Every accelerator count a healthy machine of the class comes in (its node sizes)."""
        entry = self.expect("gpu_count")
        return sorted(set(entry.get("allowed") or []) | {entry["value"]})

    @property
    def figures(self) -> dict[str, dict[str, Any]]:
        return self.data["figures"]


def known_classes() -> list[str]:
    """Every class with a spec file, sorted."""
    return sorted(p.stem for p in spec_dir().glob("*.json") if p.name != SCHEMA_FILE.name)


def load_spec(name: str) -> Spec:
    """The validated spec of one class; UnknownClassError lists the known ones."""
    path = spec_dir() / f"{name}.json"
    if name not in known_classes():
        raise UnknownClassError(
            f"unknown device class {name!r}. Known classes: {', '.join(known_classes())}"
        )
    return load_spec_file(path)


def load_all() -> dict[str, Spec]:
    return {name: load_spec(name) for name in known_classes()}


def load_spec_file(path: Path) -> Spec:
    """Parse and validate a spec file; SpecError names the file, the JSON path and the problem."""
    try:
        data = read_strict(Path(path))
    except SpecFileUnreadable as exc:
        raise SpecError(f"{path}: {exc}") from None
    _refuse(path, non_finite_problems(data))
    problem = _schema_problem(data)
    if problem is not None:
        raise SpecError(f"{path}: invalid spec {problem}")
    _refuse(path, meaning_problems(data))
    if data["class"] != path.stem:
        raise SpecError(
            f"{path}: $.class is {data['class']!r} but the file is named {path.name}: "
            f"the marker comes from the file name, so they must agree"
        )
    return Spec(data, path)


# The schema's verdict on each spec content already judged. Validation is most of a spec's load
# time (~0.1 s a file) and the same files are read again and again in one process (the plugin
# at each start, a fleet per node, the self-tests per case); a changed file is judged afresh.
_SCHEMA_VERDICTS: dict[str, str | None] = {}


def _schema_problem(data: Any) -> str | None:
    """The first schema violation of this spec, on one line; None when it is valid."""
    key = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()
    if key not in _SCHEMA_VERDICTS:
        import jsonschema

        error = jsonschema.exceptions.best_match(_validator().iter_errors(data))
        if len(_SCHEMA_VERDICTS) >= 4096:  # a bound for a process that reads endless variants
            _SCHEMA_VERDICTS.clear()
        _SCHEMA_VERDICTS[key] = None if error is None else _one_line(_describe(error))
    return _SCHEMA_VERDICTS[key]


def _refuse(path: Path, problems: list[str]) -> None:
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise SpecError(f"{path}: invalid spec {_one_line(problems[0])}{more}")


def _one_line(text: str) -> str:
    """A message a person reads on one line, however odd the value it quotes."""
    flat = " ".join(text.split())
    return flat if len(flat) <= 300 else flat[:297] + "..."


def _describe(error: jsonschema.ValidationError) -> str:
    where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    return f"at {where}: {error.message}"


@cache
def _validator() -> jsonschema.Draft202012Validator:
    import jsonschema

    schema = json.loads(SCHEMA_FILE.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)
