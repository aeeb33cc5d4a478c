"""Read the step-time logs of a job (rigcheck.blame.steplog's format), refusing what it is not."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rigcheck.blame.steplog import FILE_GLOB, FORMAT, VERSION
from rigcheck.errors import RigcheckError


class JobRecordError(RigcheckError):
    """A job's record is not in a format (or version) this rigcheck reads."""


@dataclass(frozen=True)
class RankSteps:
    rank: int
    header: dict[str, Any]
    steps: list[dict[str, Any]]

    def times(self, key: str) -> list[float]:
        return [s[key] for s in self.steps if _number(s.get(key))]

    @property
    def last_end(self) -> float | None:
        return self.steps[-1]["end"] if self.steps else None


def read_step_logs(folder: Path) -> dict[int, RankSteps]:
    """Every rank's log under FOLDER (JOB_DIR/steps), keyed by rank; {} when there is none."""
    ranks: dict[int, RankSteps] = {}
    for path in sorted(folder.glob(FILE_GLOB)):
        one = read_step_log(path)
        if one.rank in ranks:
            raise JobRecordError(f"{path}: rank {one.rank} has two step logs; one per rank")
        ranks[one.rank] = one
    return ranks


def read_step_log(path: Path) -> RankSteps:
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    if not lines:
        raise JobRecordError(f"{path}: empty; a step log starts with its header line")
    header = _header(path, lines[0])
    steps = []
    for number, line in enumerate(lines[1:], start=2):
        try:
            record = json.loads(line)
        except ValueError:
            if number == len(lines):  # the job was killed mid-line: the last line is cut short
                break
            raise JobRecordError(
                f"{path}:{number}: not JSON; is this a rigcheck step log?"
            ) from None
        if not (isinstance(record, dict) and _number(record.get("end"))):
            raise JobRecordError(f"{path}:{number}: a step line needs a numeric 'end'")
        steps.append(record)
    return RankSteps(header["rank"], header, steps)


def _header(path: Path, line: str) -> dict[str, Any]:
    try:
        header = json.loads(line)
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise JobRecordError(
            f"{path}: the first line is not a {FORMAT} header; write step logs "
            "with rigcheck.blame.steplog.StepLog (docs/blame.md)"
        )
    if header.get("version") != VERSION:
        raise JobRecordError(
            f"{path}: {FORMAT} version {header.get('version')!r}, this rigcheck "
            f"reads version {VERSION}; read it with a matching rigcheck"
        )
    if not isinstance(header.get("rank"), int) or isinstance(header.get("rank"), bool):
        raise JobRecordError(f"{path}: the header has no integer 'rank'")
    return header


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
