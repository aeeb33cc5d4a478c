"""Seeded fuzz: break one judged fact of a class's good snapshot, replay, sort the outcome.

    python -m rigcheck.facts.fuzz --seed 1 --count 500

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
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rigcheck.facts import mutations, typed

REPO = Path(__file__).resolve().parents[2]
SNAPSHOTS = REPO / "fixtures" / "snapshots"


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
    from rigcheck.plugin import SUITES_DIR  # the plugin knows where the suites are

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
        "no:rigcheck.reports.plugin",  # the certificate judges nothing; it costs most of a run
        "-p",
        "rigcheck.plugin",
        "--rootdir",
        str(REPO),
        str(SUITES_DIR / "facts"),
    ]
    with redirect_stdout(out), redirect_stderr(out):
        ret = pytest.main(args, plugins=[collector])
    return Replay(int(ret), collector.failed, collector.errors, out.getvalue())


def good_snapshot(name: str) -> dict[str, Any]:
    return json.loads((SNAPSHOTS / f"{name}.json").read_text())


def judged_paths(name: str, snapshot: dict[str, Any], workdir: Path) -> list[str]:
    """The facts the class's checks judge on its good snapshot, as paths into the snapshot."""
    typed.start_recording()
    try:
        result = replay(snapshot, name, workdir)
    finally:
        read = typed.stop_recording()
    if result.ret != 0:
        raise RuntimeError(f"{name}'s good snapshot does not pass:\n{result.output[-2000:]}")
    return sorted(p for p in (_position(p, snapshot) for p in read) if p)


def _position(path: str, snapshot: dict[str, Any]) -> str | None:
    """'devices.<NVML index>.x' as recorded -> 'devices.<list position>.x'."""
    parts = path.split(".")
    if parts[0] != "devices":
        return path
    for pos, device in enumerate(snapshot["devices"]):
        if str(device.get("index")) == parts[1]:
            return ".".join(["devices", str(pos), *parts[2:]])
    return None


def breaking(path: str, snapshot: dict[str, Any]) -> list[str]:
    """The mutations that make this fact unfit to judge."""
    return [m for m in mutations.MUTATIONS if mutations.breaks(path, m, snapshot)]


def fuzz(seed: int, count: int, classes: list[str]) -> dict[str, Any]:
    rng = random.Random(seed)
    tally: Counter[str] = Counter()
    bad: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="rigcheck-fuzz-") as tmp:
        work = Path(tmp)
        goods = {name: good_snapshot(name) for name in classes}
        paths = {name: judged_paths(name, goods[name], work) for name in classes}
        for _ in range(count):
            name = rng.choice(classes)
            path = rng.choice([p for p in paths[name] if breaking(p, goods[name])])
            how = rng.choice(breaking(path, goods[name]))
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
            "judged_facts": {n: len(p) for n, p in paths.items()}}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    from rigcheck.spec import known_classes

    parser = argparse.ArgumentParser(prog="python -m rigcheck.facts.fuzz", description=__doc__)
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
