"""NVIDIA Resiliency Extension (NVRx) straggler reports, as its Lightning callback logs them.

nvidia_resiliency_ext.ptl_resiliency.StragglerDetectionCallback logs, when its report finds
stragglers (Report.identify_stragglers: a score under the threshold, 0.75 by default):

  STRAGGLER DETECTION WARNING: Some GPUs have worse relative performance. Affected ranks:
  {StragglerId(rank=2, node='node02')}   (one line)
  STRAGGLER DETECTION WARNING: Some GPUs performance dropped. Affected ranks: {...}

and, with num_gpu_perf_scores_to_print > 0, score tables ("GPU relative performance:" then
"  Rank=2 Node=node02 Score=0.66" lines). Save the job's log under JOB_DIR/nvrx/ (*.log, *.txt).
The last warning names the stragglers: NVRx has judged them already; the scores are evidence.
A warning line in another layout is refused, never half read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from rigcheck.blame.step_reader import JobRecordError

FOLDER = "nvrx"
PATTERNS = ("*.log", "*.txt")
WARNING = "STRAGGLER DETECTION WARNING:"
KINDS = {
    "Some GPUs have worse relative performance.": "relative",
    "Some GPUs performance dropped.": "individual",
}
AFFECTED = re.compile(r"Affected ranks: \{(.*)\}\s*$")
STRAGGLER = re.compile(r"StragglerId\(rank=(\d+), node=(?:'([^']*)'|\"([^\"]*)\")\)")
TABLE = re.compile(r"GPU (relative|individual) performance:\s*$")
SCORE = re.compile(r"^\s*Rank=(\d+) Node=(\S*) Score=([0-9.]+)\s*$")


@dataclass(frozen=True)
class Straggler:
    rank: int
    node: str
    kind: str  # "relative" (slower than the best rank) or "individual" (slower than itself)
    score: float | None  # NVRx's score, 1.0 = as fast as the reference
    source: str

    @property
    def evidence(self) -> str:
        score = f" score {self.score:.2f}" if self.score is not None else ""
        reference = "the best rank" if self.kind == "relative" else "its own earlier steps"
        return (
            f"NVRx straggler detection ({self.source}): rank {self.rank}'s GPU{score} "
            f"against {reference}"
        )


def read_stragglers(folder: Path) -> list[Straggler]:
    """The stragglers of the last NVRx warning in the job's logs, relative ones first."""
    found: list[Straggler] = []
    for pattern in PATTERNS:
        for path in sorted(folder.glob(pattern)):
            found = _read_log(path) or found
    return sorted(found, key=lambda s: (s.kind != "relative", s.score or 0.0))


def reports(folder: Path) -> int:
    """NVRx's performance tables and warnings in the job's logs: none, and its silence says
    nothing about the job (an empty or binary log read as a clean job)."""
    return sum(
        1
        for pattern in PATTERNS
        for path in folder.glob(pattern)
        if path.is_file()
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines()
        if TABLE.search(line) or WARNING in line
    )


def _read_log(path: Path) -> list[Straggler]:
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    scores: dict[str, dict[int, float]] = {}
    table = None
    warnings: list[tuple[int, str, list[tuple[int, str]]]] = []
    for number, line in enumerate(lines, start=1):
        head, score = TABLE.search(line), SCORE.match(line)
        if head:
            table = head.group(1)
            scores[table] = {}
        elif score and table:
            scores[table][int(score.group(1))] = float(score.group(3))
        elif WARNING in line:
            warnings.append((number, *_warning(path, number, line)))
    # One report's warnings are logged one after the other: the last one, and its partner.
    report = [w for w in warnings[-2:] if warnings and w[0] >= warnings[-1][0] - 1]
    return [
        Straggler(rank, node, kind, scores.get(kind, {}).get(rank), f"{path.name}:{number}")
        for number, kind, named in report
        for rank, node in named
    ]


def _warning(path: Path, number: int, line: str) -> tuple[str, list[tuple[int, str]]]:
    said = line.split(WARNING, 1)[1].strip()
    kind = next((k for text, k in KINDS.items() if said.startswith(text)), None)
    affected = AFFECTED.search(said)
    named = [
        (int(m.group(1)), m.group(2) if m.group(2) is not None else m.group(3))
        for m in STRAGGLER.finditer(affected.group(1) if affected else "")
    ]
    rest = STRAGGLER.sub("", affected.group(1) if affected else "x").replace(",", "").strip()
    if kind is None or affected is None or not named or rest:
        raise JobRecordError(
            f"{path}:{number}: an NVRx straggler warning in a layout this rigcheck does not "
            "know (nvidia-resiliency-ext's callback, 0.1 to 0.7, is read): update rigcheck"
        )
    return kind, named
