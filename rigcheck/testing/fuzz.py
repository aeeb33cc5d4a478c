"""Seeded fuzz: break one judged fact of a class's good snapshot, replay, sort the outcome.

    python -m rigcheck.testing.fuzz --seed 1 --count 500

Each round picks a class, one fact its checks judged on the good snapshot (recorded by the
typed accessor, rigcheck/facts/typed.py), and a type-level mutation that breaks it (null,
"N/A", "[Not Supported]", "Enabled", "16", [], {}, a deleted key, a number of the wrong
kind), then replays `pytest -m "CLASS and facts" --facts=...` in this process. The counts it
prints must show 0 wrong passes, 0 exceptions and 0 INTERNALERRORs.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rigcheck.facts import typed
from rigcheck.layout import ROOT_DIR
from rigcheck.spec import load_spec
from rigcheck.testing import mutations
from rigcheck.testing.plugin_scan import narrowed
from rigcheck.testing.synthetic import synthetic_snapshot


@dataclass
class Replay:
    ret: int
    failed: dict[str, str]  # test name -> failure text (call phase)
    errors: dict[str, str]  # test name -> error text (setup/teardown)
    output: str


class _Collector:
    """Reads each check's outcome straight from pytest's reports."""

    def __init__(self) -> None:
        self.failed: dict[str, str] = {}
        self.errors: dict[str, str] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed:
            name = report.nodeid.split("::")[-1]
            (self.failed if report.when == "call" else self.errors)[name] = report.longreprtext


def replay(snapshot: dict[str, Any], name: str, workdir: Path) -> Replay:
    """One in-process run of the class's fact checks on a snapshot."""
    from rigcheck.plugin.core import SUITES_DIR  # the plugin knows where the suites are

    path = workdir / "facts.json"
    path.write_text(json.dumps(snapshot))
    collector, out = _Collector(), io.StringIO()
    args = [
        "-m",
        f"{name} and facts",
        f"--facts={path}",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:rigcheck.plugin.reports",  # the certificate judges nothing; it costs most of a run
        *("-p", "no:xdist", "-p", "no:xdist.looponfail", "-p", "no:anyio"),
        "-p",
        "rigcheck.plugin",
        "--rootdir",
        str(ROOT_DIR),
        str(SUITES_DIR / "facts"),
    ]
    with redirect_stdout(out), redirect_stderr(out), narrowed():
        ret = pytest.main(args, plugins=[collector])
    return Replay(int(ret), collector.failed, collector.errors, out.getvalue())


@contextmanager
def cached_specs() -> Iterator[None]:
    """Load the spec files once, not on every replay (0.04 s a replay once rigcheck.spec has
    judged each file against the schema; 0.72 s the first time)."""
    import rigcheck.plugin.core as plugin

    original = plugin.load_all
    specs = original()
    plugin.load_all = lambda: specs
    try:
        yield
    finally:
        plugin.load_all = original


def good_snapshot(name: str) -> dict[str, Any]:
    """The class's good snapshot, from the generator: a clone's fixtures/snapshots/<class>.json
    holds the same, but an installed wheel has no fixtures/ (JSON round trip: lists, not tuples)."""
    return json.loads(json.dumps(synthetic_snapshot(load_spec(name))))


@dataclass
class Judged:
    """What a class's checks read through the typed accessor on its good snapshot."""

    paths: list[str]  # every fact judged, as a path into the snapshot
    unsupported_ok: set[str]  # device facts where the check takes null as NVML's NotSupported

    def breaking(self, path: str, snapshot: dict[str, Any]) -> list[str]:
        """The mutations that make this fact unfit to judge."""
        found = [m for m in mutations.MUTATIONS if mutations.breaks(path, m, snapshot)]
        return [m for m in found if not (m == "null" and path in self.unsupported_ok)]


def judged_paths(name: str, snapshot: dict[str, Any], workdir: Path) -> Judged:
    """The facts the class's checks judge on its good snapshot, as paths into the snapshot."""
    typed.start_recording()
    try:
        result = replay(snapshot, name, workdir)
    finally:
        read, unsupported_ok = typed.stop_recording()
    if result.ret != 0:
        raise RuntimeError(f"{name}'s good snapshot does not pass:\n{result.output[-2000:]}")
    paths = sorted(p for p in (_position(p, snapshot) for p in read) if p)
    ok = {p for p in (_position(p, snapshot) for p in unsupported_ok) if p}
    judged = Judged(paths, ok)
    judged.paths = [p for p in paths if judged.breaking(p, snapshot)]
    return judged


def _position(path: str, snapshot: dict[str, Any]) -> str | None:
    """'devices.<NVML index>.x' as recorded -> 'devices.<list position>.x'."""
    parts = path.split(".")
    if parts[0] != "devices":
        return path
    for pos, device in enumerate(snapshot["devices"]):
        if str(device.get("index")) == parts[1]:
            return ".".join(["devices", str(pos), *parts[2:]])
    return None


def fuzz(seed: int, count: int, classes: list[str]) -> dict[str, Any]:
    rng = random.Random(seed)
    tally: Counter[str] = Counter()
    bad: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="rigcheck-fuzz-") as tmp, cached_specs():
        work = Path(tmp)
        goods = {name: good_snapshot(name) for name in classes}
        paths = {name: judged_paths(name, goods[name], work) for name in classes}
        for _ in range(count):
            name = rng.choice(classes)
            path = rng.choice(paths[name].paths)
            how = rng.choice(paths[name].breaking(path, goods[name]))
            result = replay(mutations.mutate(goods[name], path, how), name, work)
            verdict = mutations.classify(
                result.ret, result.failed, result.errors, result.output, path, goods[name]
            )
            tally[verdict] += 1
            if verdict not in (mutations.GOOD, mutations.USAGE):
                bad.append({"class": name, "fact": path, "mutation": how, "verdict": verdict,
                            "failed": result.failed, "errors": result.errors,
                            "output": result.output[-1500:]})  # fmt: skip
    return {"seed": seed, "count": count, "tally": dict(tally), "wrong": bad,
            "judged_facts": {n: len(p.paths) for n, p in paths.items()}}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    from rigcheck.spec import known_classes

    parser = argparse.ArgumentParser(prog="python -m rigcheck.testing.fuzz", description=__doc__)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--classes", nargs="*", default=None, help="default: every class")
    parser.add_argument("--json", metavar="FILE", help="also write the full result here")
    args = parser.parse_args(argv)
    classes = args.classes or known_classes()
    result = fuzz(args.seed, args.count, classes)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    order = [mutations.GOOD, mutations.USAGE, mutations.WRONG_PASS, mutations.UNNAMED,
             mutations.EXCEPTION, mutations.INTERNALERROR]  # fmt: skip
    print(f"seed {args.seed}, {args.count} single-fact mutations over {len(classes)} classes")
    for verdict in order:
        print(f"  {result['tally'].get(verdict, 0):5d}  {verdict}")
    for case in result["wrong"][:20]:
        print(f"  WRONG {case['verdict']}: {case['class']} {case['fact']} = {case['mutation']}")
    return 0 if len(result["wrong"]) == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
