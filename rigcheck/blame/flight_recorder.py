"""PyTorch's flight recorder dumps: which collective each rank last entered and completed.

A dump is what `torch._C._distributed_c10d._dump_fr_trace()` (and `_dump_nccl_trace()` before
it; NCCL's watchdog with TORCH_NCCL_DUMP_ON_TIMEOUT=1) writes, one file per rank named
`<prefix><rank>` (torch's default prefix: /tmp/nccl_trace_rank_, TORCH_FR_DUMP_TEMP_FILE): a
pickled dict {"version": "2.10", "pg_config", "pg_status", "entries", ...}, the layout
torch/distributed/flight_recorder/components/loader.py reads. The rank is the name's trailing
number, as torch's loader takes it. Pickles are read with an unpickler that builds only plain
data (dict, list, str, numbers), so a dump cannot run code; JSON dumps (_dump_fr_trace_json)
are read too.
"""

from __future__ import annotations

import io
import json
import pickle
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rigcheck.blame.step_reader import JobRecordError

# Dump versions whose fields this reader knows: "2.x" up to torch 2.13's "2.10". A later one
# may move pg_status or the entry fields: refused, never read into a wrong rank.
KNOWN_MAJOR, NEWEST_MINOR = 2, 10
RANK_SUFFIX = re.compile(r"(\d+)$")


@dataclass(frozen=True)
class RankDump:
    rank: int
    version: str
    last_enqueued: int  # the default group's collective sequence ids
    last_completed: int
    waiting_in: str | None  # the collective entered and not completed, e.g. "gloo:all_reduce"
    group_ranks: tuple[int, ...]
    written_at: float  # the file's mtime, time.time() seconds


class _PlainData(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        raise JobRecordError(f"a flight recorder dump that names {module}.{name}: plain data only")


def read_dumps(folder: Path) -> dict[int, RankDump]:
    dumps = {}
    for path in sorted(p for p in folder.iterdir() if p.is_file()):
        found = RANK_SUFFIX.search(path.name)
        if found is None or path.name.endswith(".tmp"):
            continue
        dumps[int(found.group(1))] = read_dump(path, int(found.group(1)))
    return dumps


def read_dump(path: Path, rank: int) -> RankDump:
    data = _load(path)
    version = str(data.get("version")) if isinstance(data, dict) else None
    if not _known(version):
        raise JobRecordError(
            f"{path}: flight recorder dump version {version!r}; this rigcheck "
            f"reads {KNOWN_MAJOR}.0 to {KNOWN_MAJOR}.{NEWEST_MINOR} (torch up "
            "to 2.13): update rigcheck to read it"
        )
    entries = data.get("entries")
    if not isinstance(entries, list):
        raise JobRecordError(f"{path}: the dump has no 'entries' list")
    enqueued, completed = _default_group_status(data, entries)
    waiting = next(
        (
            e.get("profiling_name")
            for e in entries
            if _default_pg(e) and e.get("collective_seq_id") == enqueued and enqueued > completed
        ),
        None,
    )
    written = path.stat().st_mtime
    return RankDump(rank, version, enqueued, completed, waiting, _group_ranks(data), written)


def _load(path: Path) -> Any:
    raw = path.read_bytes()
    try:
        if raw[:1] == b"{":
            return json.loads(raw)
        return _PlainData(io.BytesIO(raw)).load()
    except JobRecordError as exc:
        raise JobRecordError(f"{path}: {exc}") from None
    except Exception:  # any broken pickle or JSON is one refusal
        raise JobRecordError(
            f"{path}: not a flight recorder dump (neither pickle nor JSON); "
            "name dumps <prefix><rank>, as torch writes them"
        ) from None


def _known(version: str | None) -> bool:
    major, _, minor = (version or "").partition(".")
    return major == str(KNOWN_MAJOR) and minor.isdigit() and int(minor) <= NEWEST_MINOR


def _default_group_status(data: dict[str, Any], entries: list[Any]) -> tuple[int, int]:
    """pg_status of group 0 when the dump has it; else from the entries' states."""
    status = (
        (data.get("pg_status") or {}).get("0") if isinstance(data.get("pg_status"), dict) else None
    )
    if isinstance(status, dict) and isinstance(status.get("last_enqueued_collective"), int):
        return status["last_enqueued_collective"], int(status.get("last_completed_collective", -1))
    mine = [e for e in entries if _default_pg(e) and isinstance(e.get("collective_seq_id"), int)]
    enqueued = max((e["collective_seq_id"] for e in mine), default=-1)
    done = [e["collective_seq_id"] for e in mine if e.get("state") == "completed"]
    return enqueued, max(done, default=-1)


def _default_pg(entry: Any) -> bool:
    return isinstance(entry, dict) and entry.get("pg_id") == 0 and not entry.get("is_p2p")


def _group_ranks(data: dict[str, Any]) -> tuple[int, ...]:
    """The default group's ranks: pg_config's largest rank list (its key differs by backend)."""
    best: tuple[int, ...] = ()
    for config in (data.get("pg_config") or {}).values():
        try:
            ranks = tuple(json.loads(config["ranks"]))
        except (TypeError, KeyError, ValueError):
            continue
        best = ranks if len(ranks) > len(best) else best
    return best


@dataclass(frozen=True)
class Hang:
    waiting: list[int]  # ranks inside collective `seq`
    behind: list[int]  # dumped ranks that never entered it
    silent: list[int]  # ranks of the group that wrote no dump
    seq: int
    collective: str | None

    @property
    def culprits(self) -> list[int]:
        return self.behind + self.silent

    @property
    def evidence(self) -> str:
        parts = [
            f"rank(s) {listed(self.waiting)} wait in collective #{self.seq} "
            f"({self.collective or 'unnamed'})"
        ]
        if self.behind:
            parts.append(f"rank(s) {listed(self.behind)} never entered it")
        if self.silent:
            parts.append(f"rank(s) {listed(self.silent)} wrote no dump (stopped or dead)")
        return "; ".join(parts)


def find_hang(dumps: dict[int, RankDump]) -> Hang | None:
    """The collective some ranks wait in and the ranks they wait on; None when none waits."""
    if not dumps:
        return None
    seq = max(d.last_enqueued for d in dumps.values())
    waiting = sorted(
        r for r, d in dumps.items() if d.last_enqueued == seq and d.last_completed < seq
    )
    if not waiting:
        return None
    behind = sorted(
        (r for r, d in dumps.items() if d.last_enqueued < seq),
        key=lambda r: (dumps[r].last_enqueued, r),
    )
    group = set().union(*(d.group_ranks for d in dumps.values()))
    silent = sorted(group - set(dumps))
    collective = dumps[waiting[0]].waiting_in
    return Hang(waiting, behind, silent, seq, collective)


def listed(ranks: list[int]) -> str:
    return ", ".join(map(str, ranks[:8])) + (f" (+{len(ranks) - 8})" if len(ranks) > 8 else "")
