"""NCCL's RAS client output (`ncclras`, text or `-f json`): which ranks a hung job waits on.

The job saves the client's answers under JOB_DIR/ncclras/, one file per query, named so they
sort in time order (`ncclras > JOB_DIR/ncclras/$(date +%Y%m%dT%H%M%S).txt`). Formats as
NVIDIA/nccl src/ras/client_support.cc writes them and docs/.../troubleshooting/ras.rst shows:
text from NCCL 2.24 (the first with RAS) to 2.30, JSON from 2.28.7 (its first) to 2.30. Any
other version is refused: RAS's text "varies from release to release".

Ranks are named only in the job's world communicator (the one holding every GPU of the job),
where a communicator rank is the job's rank. A rank RAS cannot reach is one the others wait on.
Ranks behind in their operation counts are named only when the same split stands in the last
two answers: RAS's docs call a split in one answer normal while collectives run.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rigcheck.blame.flight_recorder import listed
from rigcheck.blame.step_reader import JobRecordError

FOLDER = "ncclras"
TEXT_VERSIONS = ((2, 24), (2, 30))  # (major, minor) bounds this reader knows
JSON_VERSIONS = ((2, 28), (2, 30))
VERSION = re.compile(r"^NCCL version (\d+)\.(\d+)\.(\d+)", re.M)
BLOCK = re.compile(r"^#(\d+)-(\d+) \(([0-9a-f]+)\) (\S+)$")
RANK = re.compile(
    r"^Rank (\d+)(?: has launched up to operation (\d+)| has not launched any operations)?"
    r" -- (?:GPU (\d+)(?: \(NVML (\d+)\))? managed by process (\d+) on node (\S+)"
    r"|\[process information not found\])"
)
GROUP = re.compile(r"^(\d+) ranks have (?:launched up to operation (\d+)|not launched any)")
SPLIT = re.compile(r"^Communicator ranks have different (\w+) operation counts")
MISSING = re.compile(r"^The missing ranks?: (.+)$")


@dataclass(frozen=True)
class CountSplit:
    """One operation type whose count differs between ranks: (count, ranks) groups and the
    ranks RAS listed with their count (text lists only the small groups)."""

    groups: tuple[tuple[int, int], ...]
    members: dict[int, tuple[int, dict[str, Any]]] = field(compare=False)

    @property
    def ahead(self) -> int:
        return max(count for count, _ in self.groups)


@dataclass(frozen=True)
class RasAnswer:
    source: str
    version: str
    world: bool  # whether the communicator read is the job's world communicator
    about: str  # that communicator, in words
    missing: dict[int, dict[str, Any]]  # rank -> where it ran (host, gpu, pid)
    splits: dict[str, CountSplit]  # operation type -> split


@dataclass(frozen=True)
class RasHang:
    culprits: list[int]
    places: dict[int, dict[str, Any]]
    evidence: str


def read_answers(folder: Path) -> list[RasAnswer]:
    return [read_answer(p) for p in sorted(folder.iterdir()) if p.is_file()]


def read_answer(path: Path) -> RasAnswer:
    text = path.read_text(encoding="utf-8", errors="replace")
    if text.lstrip().startswith("{"):
        return _json_answer(path, text)
    return _text_answer(path, text)


def _refuse_version(path: Path, version: str, known: tuple[tuple[int, int], ...], kind: str):
    parts = version.split(".")
    low, high = known
    numeric = len(parts) >= 2 and all(p.isdigit() for p in parts[:2])
    if numeric and low <= (int(parts[0]), int(parts[1])) <= high:
        return
    raise JobRecordError(
        f"{path}: ncclras {kind} output of NCCL {version}; this rigcheck reads "
        f"{low[0]}.{low[1]} to {high[0]}.{high[1]}: update rigcheck to read it"
    )


def _text_answer(path: Path, text: str) -> RasAnswer:
    found = VERSION.search(text)
    if found is None:
        raise JobRecordError(
            f"{path}: not ncclras output (no 'NCCL version' line); save the client's whole "
            "answer, `ncclras > FILE` (docs/blame.md)"
        )
    version = ".".join(found.groups())
    _refuse_version(path, version, TEXT_VERSIONS, "text")
    lines = text.splitlines()
    gpus, (comms, per_comm) = _total_gpus(lines), _group_zero(lines)
    world = comms == 1 and per_comm is not None and per_comm == gpus
    about = f"communicator #0-0 ({per_comm} ranks; the job has {gpus} GPUs)"
    missing: dict[int, dict[str, Any]] = {}
    splits: dict[str, CountSplit] = {}
    for kind, body in _blocks(lines, "#0-0"):
        if "INCOMPLETE" in kind:
            missing.update(_missing(body))
        if "MISMATCH" in kind:
            splits.update(_splits(body))
    return RasAnswer(path.name, version, world, about, missing, splits)


def _total_gpus(lines: list[str]) -> int | None:
    """The job summary's last column under '(total)': the job's GPUs."""
    for number, line in enumerate(lines[:-1]):
        if line.startswith("(total)"):
            values = lines[number + 1].split()
            return int(values[-1]) if values and values[-1].isdigit() else None
    return None


def _group_zero(lines: list[str]) -> tuple[int | None, int | None]:
    """(communicators in group 0, ranks per communicator) from the Communicators table."""
    for number, line in enumerate(lines):
        if line.startswith("Group") and "Comms" in line:
            for row in lines[number + 2 :]:
                cols = row.split()
                if not cols:
                    break
                if cols[0] == "0" and len(cols) >= 5 and cols[1].isdigit() and cols[4].isdigit():
                    return int(cols[1]), int(cols[4])
    return None, None


def _blocks(lines: list[str], name: str) -> list[tuple[str, list[str]]]:
    """The blocks about communicator NAME: (their error kinds, their indented lines)."""
    found, current = [], None
    for line in lines:
        head = BLOCK.match(line)
        if head:
            current = [] if f"#{head.group(1)}-{head.group(2)}" == name else None
            if current is not None:
                found.append((head.group(4), current))
        elif current is not None and line.startswith("  "):
            current.append(line.strip())
        else:
            current = None
    return found


def _place(match: re.Match[str]) -> dict[str, Any]:
    if match.group(6) is None:
        return {}
    nvml = match.group(4) if match.group(4) is not None else match.group(3)
    return {"host": match.group(6), "gpu": nvml, "pid": int(match.group(5))}


def _missing(body: list[str]) -> dict[int, dict[str, Any]]:
    missing = {}
    for line in body:
        listed = MISSING.match(line)
        if listed:  # NCCL 2.24-2.25: "The missing ranks: 3, 5-7"
            missing.update({rank: {} for rank in _ranks_of(listed.group(1))})
        rank = RANK.match(line)
        if rank:
            missing[int(rank.group(1))] = _place(rank)
    return missing


def _ranks_of(text: str) -> list[int]:
    ranks = []
    for part in text.replace(" ", "").split(","):
        low, _, high = part.partition("-")
        if low.isdigit() and (not high or high.isdigit()):
            ranks += range(int(low), int(high or low) + 1)
    return ranks


def _splits(body: list[str]) -> dict[str, CountSplit]:
    splits: dict[str, CountSplit] = {}
    op, groups, members, count = None, [], {}, None
    for line in [*body, "Communicator ranks have different end"]:
        head = SPLIT.match(line)
        if head or line.startswith("Communicator ranks have different"):
            if op is not None:
                splits[op] = CountSplit(tuple(sorted(groups)), members)
            op, groups, members, count = (head.group(1) if head else None), [], {}, None
            continue
        group, rank = GROUP.match(line), RANK.match(line)
        if op is None:
            continue
        if group:
            count = int(group.group(2) or 0)
            groups.append((count, int(group.group(1))))
        elif rank and (rank.group(2) is not None or "not launched" in line):
            alone = int(rank.group(2) or 0)  # a group of one, printed on the rank's own line
            groups.append((alone, 1))
            members[int(rank.group(1))] = (alone, _place(rank))
        elif rank and count is not None:
            members[int(rank.group(1))] = (count, _place(rank))
    return splits


def _json_answer(path: Path, text: str) -> RasAnswer:
    try:
        data = json.loads(text)
    except ValueError:
        raise JobRecordError(f"{path}: not JSON; save `ncclras -f json` whole") from None
    version = str(data.get("nccl_version")) if isinstance(data, dict) else "None"
    if not isinstance(data, dict) or not isinstance(data.get("communicators"), list):
        raise JobRecordError(f"{path}: no 'communicators' list: not `ncclras -f json` output")
    _refuse_version(path, version, JSON_VERSIONS, "JSON")
    comms = [c for c in data["communicators"] if isinstance(c, dict)]
    gpus = {
        (r.get("host"), r.get("pid"), r.get("cuda_dev"))
        for c in comms
        for r in _dicts(c.get("ranks")) + _dicts(c.get("missing_ranks"))
    }
    world = next((c for c in comms if c.get("size") == len(gpus)), None)
    about = f"no communicator holds all {len(gpus)} GPUs of the job"
    if world is None:
        return RasAnswer(path.name, version, False, about, {}, {})
    missing = {
        r["rank"]: _json_place(r)
        for r in _dicts(world.get("missing_ranks"))
        if isinstance(r.get("rank"), int)
        and any((r.get("status") or {}).get(k) for k in ("unresponsive", "considered_dead"))
    }
    about = f"communicator {world.get('hash')} ({world.get('size')} ranks)"
    return RasAnswer(path.name, version, True, about, missing, _json_splits(world))


def _json_splits(world: dict[str, Any]) -> dict[str, CountSplit]:
    counts: dict[str, dict[int, tuple[int, dict[str, Any]]]] = {}
    for rank in _dicts(world.get("ranks")):
        for op, value in (rank.get("collective_counts") or {}).items():
            if isinstance(rank.get("rank"), int) and isinstance(value, int):
                counts.setdefault(op, {})[rank["rank"]] = (value, _json_place(rank))
    splits = {}
    for op, members in counts.items():
        groups = Counter(value for value, _ in members.values())
        if len(groups) > 1:
            splits[op] = CountSplit(tuple(sorted(groups.items())), members)
    return splits


def _json_place(rank: dict[str, Any]) -> dict[str, Any]:
    gpu = rank.get("nvml_dev")
    return {
        "host": rank.get("host"),
        "gpu": None if gpu is None else str(gpu),
        "pid": rank.get("pid"),
    }


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def find_ras_hang(answers: list[RasAnswer]) -> RasHang | None:
    """The ranks the last answer says the job waits on; None when it names no trouble."""
    if not answers:
        return None
    last = answers[-1]
    said = f"ncclras (NCCL {last.version}, {last.source})"
    if not last.world:
        if last.missing or last.splits:
            return RasHang(
                [], {}, f"{said}: {last.about} is not the job's: its ranks are not named"
            )
        return None
    if last.missing:
        ranks = sorted(last.missing)
        return RasHang(
            ranks,
            last.missing,
            f"{said}: rank(s) {listed(ranks)} unreachable, missing from {last.about}",
        )
    before = answers[-2].splits if len(answers) > 1 else {}
    for op, split in sorted(last.splits.items()):
        if before.get(op) == split:  # the same counts twice: stuck, not merely running
            return _behind(said, op, split)
    return None


def _behind(said: str, op: str, split: CountSplit) -> RasHang:
    behind = {r: m for r, m in split.members.items() if m[0] < split.ahead}
    total = sum(n for count, n in split.groups if count < split.ahead)
    ranks = sorted(behind)
    text = f"{said}: {total} rank(s) stuck behind operation {split.ahead} of {op} in two answers"
    if len(ranks) < total:  # RAS lists only the small groups: the many behind go unnamed
        text += (
            f"; RAS named {len(ranks)} of them (it lists small groups only: save the "
            "flight recorder dumps to name them)"
        )
    return RasHang(ranks, {r: m[1] for r, m in behind.items()}, text)
