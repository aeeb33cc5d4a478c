"""A collective run read back: every rank's result, its progress file, and how the job ended.

The same object comes from a live torchrun job (its report folder) and from a recording: a
report folder copied from a machine, or one bundled JSON file (`python -m
rigcheck.distributed.results DIR -o FILE`). Checks judge it without knowing which.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rigcheck.distributed.measure import BUSBW_FACTOR, bandwidth
from rigcheck.distributed.progress import diagnose, slow_not_hung, write_json_atomically
from rigcheck.errors import RigcheckError

BUNDLE_SCHEMA = "rigcheck.collectives-bundle/1"
OPS = tuple(BUSBW_FACTOR)


class CollectivesError(RigcheckError):
    """Recorded collective results cannot be read."""


@dataclass(frozen=True)
class Bandwidth:
    """One collective over all ranks: nccl-tests' average of the ranks' times."""

    op: str
    nbytes: int
    world: int
    seconds: float
    algbw_gbps: float
    busbw_gbps: float
    verified: bool


@dataclass
class CollectiveRun:
    source: str
    ranks: dict[int, dict[str, Any]]
    progress: dict[int, dict[str, Any]] = field(default_factory=dict)
    launch: dict[str, Any] | None = None
    origin: dict[str, Any] | None = None

    @property
    def world_size(self) -> int | None:
        sizes = [e["world_size"] for e in [*self.ranks.values(), *self.progress.values()]]
        return max(sizes) if sizes else None

    @property
    def hosts(self) -> list[str]:
        return sorted({e["host"] for e in [*self.ranks.values(), *self.progress.values()]})

    def label(self, rank: int) -> str:
        """'rank 3 (GPU 3)', with the host when the run spans several."""
        entry = self.ranks.get(rank) or self.progress.get(rank) or {}
        device = entry.get("device") or {}
        if device.get("kind") == "cuda":
            where = f"GPU {device['index']}"
        elif device.get("kind") == "cpu":
            where = "CPU"
        else:
            where = f"local rank {entry.get('local_rank', '?')}"
        if len(self.hosts) > 1:
            where = f"{entry.get('host', '?')} {where}"
        return f"rank {rank} ({where})"

    def problems(self) -> list[str]:
        """Why the job did not finish on every rank, the rank to blame first; [] if it did."""
        launch = self.launch or {}
        lines = []
        if launch.get("timed_out"):
            lines.append(
                f"the watchdog stopped the torchrun job after {launch['timeout_s']:.0f} s "
                "(--collective-timeout)"
            )
        world = self.world_size
        if world is None:
            tail = launch.get("log_tail", "").strip().splitlines()[-5:]
            return [*lines, "no rank wrote a result or a progress file", *tail]
        found = diagnose(world, self.ranks, self.progress, launch.get("stopped_at"), self.label)
        if not found and launch.get("returncode") not in (None, 0):
            tail = launch.get("log_tail", "").strip().splitlines()[-3:]
            found = [f"torchrun exited {launch['returncode']}: {' | '.join(tail)}"]
        return [*lines, *found] if found else []

    def incomplete(self) -> str | None:
        """Why a job the time limit stopped is INCOMPLETE rather than a fault: every rank was
        alive and together, only slow (a loaded host). None when it finished, or a rank is to
        blame."""
        launch = self.launch or {}
        if not launch.get("timed_out"):
            return None
        where = slow_not_hung(self.world_size, self.ranks, self.progress, launch["stopped_at"])
        if where is None:
            return None
        return (
            f"the collective job did not finish within its {launch['timeout_s']:.0f} s cap: "
            f"{where} when it was stopped"
        )

    def results(self) -> list[dict[str, Any]]:
        return [self.ranks[r] for r in sorted(self.ranks)]

    @property
    def backend(self) -> str | None:
        return next((r.get("backend") for r in self.results() if r.get("backend")), None)

    def bandwidth(self, op: str) -> Bandwidth | str:
        """The op over all ranks, or why it was skipped; CollectivesError when a rank that
        finished has no result for it (a missing measurement is not a skip)."""
        entries = [(r["rank"], r.get(op)) for r in self.results()]
        for rank, entry in entries:
            if not isinstance(entry, dict):
                raise CollectivesError(f"{self.label(rank)} has no {op} result in {self.source}")
            if "skipped" in entry:
                return entry["skipped"]
        world = self.world_size or len(entries)
        seconds = statistics.fmean(entry["median_s"] for _, entry in entries)
        nbytes = entries[0][1]["bytes"]
        rates = bandwidth(op, nbytes, seconds, world)
        verified = all(entry.get("verified", False) for _, entry in entries)
        return Bandwidth(op, nbytes, world, seconds, **rates, verified=verified)

    def p2p(self) -> list[tuple[str, dict[str, Any]]]:
        """(host, its local rank 0's peer-copy results) for every host that has them."""
        return [(r["host"], r["p2p"]) for r in self.results() if "p2p" in r]


def load_run(path: str | Path, launch: dict[str, Any] | None = None) -> CollectiveRun:
    """A report folder (results/, progress/, launch.json) or one bundled JSON file."""
    path = Path(path)
    if path.is_dir():
        ranks = _by_rank(path / "results", "result")
        progress = _by_rank(path / "progress", "progress")
        runs = {e.get("run_id") for e in [*ranks.values(), *progress.values()]}
        if len(runs) > 1:
            raise CollectivesError(
                f"{path} holds files of {len(runs)} torchrun jobs ({', '.join(map(str, runs))}): "
                "give each run its own --report-dir"
            )
        if launch is None and (path / "launch.json").exists():
            launch = _read(path / "launch.json")
        return CollectiveRun(str(path), ranks, progress, launch)
    if not path.exists():
        raise CollectivesError(f"{path}: no such file or folder")
    data = _read(path)
    if data.get("schema") != BUNDLE_SCHEMA:
        raise CollectivesError(f"{path}: not a {BUNDLE_SCHEMA} file (schema {data.get('schema')})")
    ranks = {e["rank"]: e for e in data["ranks"]}
    progress = {e["rank"]: e for e in data.get("progress", [])}
    return CollectiveRun(str(path), ranks, progress, data.get("launch"), data.get("origin"))


def bundle(run: CollectiveRun, origin: dict[str, Any]) -> dict[str, Any]:
    """One JSON document holding a whole run, for recording it as a fixture."""
    return {
        "schema": BUNDLE_SCHEMA,
        "origin": origin,
        "launch": run.launch,
        "ranks": run.results(),
        "progress": [run.progress[r] for r in sorted(run.progress)],
    }


def _by_rank(folder: Path, what: str) -> dict[int, dict[str, Any]]:
    entries = {}
    for file in sorted(folder.glob("*.json")):
        entry = _read(file)
        if entry.get("rank") in entries:
            raise CollectivesError(
                f"{file}: a second {what} for rank {entry['rank']}: the folder holds two runs; "
                "give each run its own --report-dir"
            )
        entries[entry["rank"]] = entry
    return entries


def _read(file: Path) -> dict[str, Any]:
    try:
        return json.loads(file.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise CollectivesError(f"{file}: cannot read it: {exc}") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m rigcheck.distributed.results",
        description="bundle a collectives report folder into one JSON file (to record it)",
    )
    parser.add_argument("folder", type=Path)
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--note", default="", help="what machine this was recorded on")
    args = parser.parse_args(argv)
    run = load_run(args.folder)
    write_json_atomically(args.output, bundle(run, {"kind": "recorded", "note": args.note}))
    print(f"wrote {args.output}: {len(run.ranks)} rank(s) on {', '.join(run.hosts)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
