"""Reading the folder a pair job wrote on every node: plan.json and pairs/round*.json, each
checked before anything is judged (fail closed, naming the file and the field). The NCCL node
pairs (pair_verdict.py) and the perftest pairs (rigcheck/rdma/perftest_run.py) share this shape.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class RunFolder:
    """What one kind of run folder holds, and the error its damage is reported as."""

    folder: str  # "a node-pair run folder", for "not <folder>"
    writer: str  # the module that writes it, for "not written by <writer>"
    plan_schema: str
    pair_schema: str
    plan_fields: dict[str, Any]  # key -> type(s) each plan must hold
    pair_fields: dict[str, Any]  # key -> type(s) each pair result must hold
    error: type[Exception]

    def read(self, path: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """(the plan, every pair result of its run), in file-name order."""
        path = Path(path)
        plan_file = path / "plan.json"
        if not plan_file.is_file():
            raise self.error(f"{path}: no plan.json: not {self.folder} (or it never began)")
        plan = self._read(plan_file)
        if plan.get("schema") != self.plan_schema:
            raise self.error(
                f"{plan_file}: not a {self.plan_schema} file (schema {plan.get('schema')})"
            )
        self._require(plan_file, plan, self.plan_fields)
        entries = []
        for file in sorted((path / "pairs").glob("round*.json")):
            entry = self._read(file)
            if entry.get("schema") != self.pair_schema or entry.get("run_id") != plan.get("run_id"):
                raise self.error(
                    f"{file}: not a result of the run in {plan_file} (run {plan.get('run_id')}): "
                    "give each run its own --report-dir"
                )
            self._require(file, entry, self.pair_fields)
            entries.append(entry)
        return plan, entries

    def _require(self, file: Path, data: dict[str, Any], fields: dict[str, Any]) -> None:
        """A result without its number is no result: name the field and what it should be."""
        for key, kind in fields.items():
            value = data.get(key)
            if not isinstance(value, kind) or isinstance(value, bool):
                raise self.error(
                    f"{file}: '{key}' is {value!r}, not a {getattr(kind, '__name__', 'number')}: "
                    f"the file is damaged or not written by {self.writer}"
                )

    def _read(self, file: Path) -> dict[str, Any]:
        try:
            return json.loads(file.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise self.error(f"{file}: cannot read it: {exc}") from None
