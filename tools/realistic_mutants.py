"""The realistic-mutant campaign: hand-written bugs of the kinds engineers really write.

    python tools/realistic_mutants.py                   # every area: tests/mutation/realistic/
    python tools/realistic_mutants.py counters fleet    # some areas
    python tools/realistic_mutants.py --only fleet-07   # one mutant
    python tools/realistic_mutants.py --list            # the mutants, by area
    python tools/realistic_mutants.py --file held_out.toml   # a set kept outside the project

(Python 3.11 or later: the mutant files are TOML, read with tomllib.)

mutmut writes operator mutants (`<` for `<=`); the bugs that survive review are of other kinds: a
field read from its neighbour, an error stored as a value, a category moved in a table, a list
trimmed from the wrong end. Each mutant here is one such bug, written by hand: the file, an exact
snippet of it, its replacement, the kind, and the area's tests that must fail. The runner copies
the checkout (git's tracked and unignored files) into a temporary folder, applies each mutant
there in turn (the real checkout is never written), runs the tests named with -x -q, no xdist,
and prints the kill rate per area. Each selection of tests is first run on the unmutated copy:
one that fails there kills nothing, and its mutants are reported as not run. Survivors, and why
each is harmless, are listed in tests/mutation/realistic/survivors.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import tomllib

REPO = Path(__file__).resolve().parents[1]
CAMPAIGN = REPO / "tests" / "mutation" / "realistic"
KINDS = {
    "neighbour-field": "a field read from its neighbour (current for max, a sibling counter)",
    "error-as-value": "a library error stored as a value (none counted, not supported)",
    "category-moved": "an entry of a classification table filed under a milder class",
    "wrong-end": "a list trimmed or picked from the wrong end",
    "side-path-drop": "records dropped on a side path (a record without the field a filter reads)",
    "and-for-or": "`and` written for `or`, or the other way round",
    "host-for-process": "the host's resources counted where the process's own limits were meant",
    "unit-slip": "a unit or scale slipped (MiB for GiB, seconds for milliseconds)",
    "off-by-one": "a limit compared one step off (the count just over the limit passes)",
    "sense-inverted": "a verdict's sense inverted (Fatal read as nonfatal, and the reverse)",
    "loose-match": "a word matched too loosely or too strictly ('fatal' inside 'Nonfatal', case)",
    "anchor-slip": "a pattern anchored where the line does not start (a dmesg stamp before it)",
    "wrong-gpu": "a fault blamed on the wrong GPU (one of several near it, or any in the log)",
    "id-mixup": "a GPU looked up by the wrong identifier (index for bus id or UUID)",
}
PYTEST = ("-x", "-q", "-p", "no:cacheprovider", "-n", "0")


@dataclass(frozen=True)
class Mutant:
    id: str
    area: str
    file: str  # relative to the checkout
    old: str  # an exact snippet, found exactly once in the file
    new: str
    kind: str
    tests: tuple[str, ...]  # pytest node ids or paths, relative to the checkout
    note: str = ""  # what the bug does on a real machine


def load(path: Path) -> list[Mutant]:
    """The mutants of one campaign file; the area is the file's name."""
    data = tomllib.loads(path.read_text())
    area = data.get("area", path.stem)
    default_tests = data.get("tests", [])  # the area's tests, unless a mutant names its own
    return [
        Mutant(
            id=entry["id"],
            area=area,
            file=entry["file"],
            old=entry["old"],
            new=entry["new"],
            kind=entry["kind"],
            tests=tuple(entry.get("tests") or tests_of(entry.get("tests_of")) or default_tests),
            note=entry.get("note", ""),
        )
        for entry in data["mutant"]
    ]


def tests_of(area: str | None) -> list[str]:
    """The tests a campaign area names: a set kept elsewhere (held out) writes `tests_of =
    "reports"` and is run against the area's tests as they are today."""
    if area is None:
        return []
    return tomllib.loads((CAMPAIGN / f"{area}.toml").read_text())["tests"]


def campaign(files: list[Path] | None = None) -> list[Mutant]:
    paths = files or sorted(CAMPAIGN.glob("*.toml"))
    return [mutant for path in paths for mutant in load(path)]


def applied(text: str, mutant: Mutant) -> str | None:
    """The file's text with the mutant written in; None if its snippet is not there exactly once."""
    if text.count(mutant.old) != 1:
        return None
    return text.replace(mutant.old, mutant.new)


def problems(mutant: Mutant, root: Path = REPO) -> list[str]:
    """Why this mutant cannot be run as written (an empty list when it can)."""
    found = []
    source = root / mutant.file
    if not source.is_file():
        return [f"{mutant.id}: {mutant.file} does not exist"]
    count = source.read_text().count(mutant.old)
    if count != 1:
        found.append(f"{mutant.id}: its old snippet occurs {count} times in {mutant.file}")
    if mutant.old == mutant.new:
        found.append(f"{mutant.id}: old and new are the same")
    if mutant.kind not in KINDS:
        found.append(f"{mutant.id}: unknown kind {mutant.kind!r} (known: {', '.join(KINDS)})")
    if not mutant.tests:
        found.append(f"{mutant.id}: names no tests")
    for test in mutant.tests:
        if not (root / test.split("::")[0]).exists():
            found.append(f"{mutant.id}: test path {test} does not exist")
    return found


def copy_checkout(into: Path) -> None:
    """Git's tracked and unignored files, as they are in the working tree now."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (raw.decode() for raw in listed)):
        source = REPO / name
        if source.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)


def run_tests(copy: Path, tests: tuple[str, ...], timeout: float) -> tuple[int, float]:
    """pytest's exit code on the copy (124 when it ran out of time) and the seconds it took."""
    # CI=1: the hypothesis profile CI uses (fixed seed, fewer examples).
    env = dict(os.environ, PYTHONPATH=str(copy), PYTHONDONTWRITEBYTECODE="1", CI="1")
    env.setdefault("RIGCHECK_REPORT_DIR", str(copy / "build" / "reports"))
    start = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", *PYTEST, *tests],
            cwd=copy,
            env=env,
            capture_output=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return 124, time.monotonic() - start
    return done.returncode, time.monotonic() - start


def imports_the_copy(copy: Path) -> bool:
    """The tests must import the mutated rigcheck, not the editable install of the checkout."""
    env = dict(os.environ, PYTHONPATH=str(copy))
    found = subprocess.run(
        [sys.executable, "-c", "import rigcheck; print(rigcheck.__file__)"],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return Path(found).resolve().is_relative_to(copy.resolve())


def outcome(code: int) -> str:
    # 1: a test failed. 2-4 (interrupted, internal or usage error) and timeouts also stop a
    # user's run, so they kill too; 5 (nothing collected) is a broken campaign entry.
    if code == 0:
        return "survived"
    if code in (4, 5):  # a test path that does not exist, or nothing collected
        return f"error: pytest exit {code} (the mutant's test list is wrong)"
    return "killed" if code in (1, 2, 3, 124) else f"killed (pytest exit {code})"


def run_campaign(mutants: list[Mutant], timeout: float) -> list[dict]:
    results = []
    with tempfile.TemporaryDirectory(prefix="realistic-mutants-") as folder:
        copy = Path(folder)
        copy_checkout(copy)
        if not imports_the_copy(copy):
            sys.exit("the copy's tests import rigcheck from elsewhere: mutants would not be seen")
        failing = baseline_failures(copy, mutants, timeout)
        for mutant in mutants:
            if mutant.tests in failing:
                print(f"  {mutant.id:14} NOT RUN: its tests fail without the mutant")
                results.append(not_run(mutant, "error: its tests fail without the mutant"))
                continue
            results.append(run_one(copy, mutant, timeout))
    return results


def baseline_failures(copy: Path, mutants: list[Mutant], timeout: float) -> set[tuple]:
    """The test selections that fail on the unmutated copy: a mutant 'killed' by them would be
    a kill of nothing, so their mutants are not run."""
    failing = set()
    for tests in dict.fromkeys(m.tests for m in mutants):
        code, seconds = run_tests(copy, tests, timeout)
        print(f"  baseline {'passes' if code == 0 else f'FAILS (exit {code})'} in {seconds:.1f}s:"
              f" {' '.join(tests)}")  # fmt: skip
        if code != 0:
            failing.add(tests)
    return failing


def not_run(mutant: Mutant, why: str) -> dict:
    return {"id": mutant.id, "area": mutant.area, "kind": mutant.kind, "file": mutant.file,
            "outcome": why, "seconds": 0.0}  # fmt: skip


def run_one(copy: Path, mutant: Mutant, timeout: float) -> dict:
    source = copy / mutant.file
    original = source.read_text()
    mutated = applied(original, mutant)
    assert mutated is not None  # problems() checked the snippet occurs exactly once
    result = {"id": mutant.id, "area": mutant.area, "kind": mutant.kind, "file": mutant.file}
    wrong = problems(mutant, copy)
    if wrong:
        print(f"  {mutant.id:14} ERROR: {'; '.join(wrong)}")
        return result | {"outcome": "error: " + "; ".join(wrong), "seconds": 0.0}
    source.write_text(mutated)
    try:
        code, seconds = run_tests(copy, mutant.tests, timeout)
    finally:
        source.write_text(original)
    verdict = outcome(code)
    print(f"  {mutant.id:14} {verdict:9} {seconds:5.1f}s  {mutant.kind:16} {mutant.file}")
    return result | {"outcome": verdict, "seconds": round(seconds, 1)}


def summary(results: list[dict]) -> list[str]:
    lines = [
        "",
        "| area | mutants | killed | survived | not run (stale, error) | kill rate |",
        "|---|---|---|---|---|---|",
    ]
    areas = sorted({result["area"] for result in results})
    for area in [*areas, "all"]:
        mine = [r for r in results if area in ("all", r["area"])]
        killed = sum(r["outcome"].startswith("killed") for r in mine)
        survived = sum(r["outcome"] == "survived" for r in mine)
        not_run = len(mine) - killed - survived
        rate = f"{100 * killed / len(mine):.1f}%" if mine else "-"
        lines.append(f"| {area} | {len(mine)} | {killed} | {survived} | {not_run} | {rate} |")
    left = [r for r in results if not r["outcome"].startswith("killed")]
    lines.append("")
    lines += [f"not killed: {r['id']} ({r['outcome']}; {r['kind']}; {r['file']})" for r in left]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("areas", nargs="*", help="areas to run (the campaign files' names)")
    parser.add_argument("--only", action="append", default=[], help="run only this mutant id")
    parser.add_argument("--file", action="append", type=Path, default=[], help="a mutant file")
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per mutant's tests")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)
    mutants = campaign(args.file or None)
    if args.areas:
        mutants = [m for m in mutants if m.area in args.areas]
    if args.only:
        mutants = [m for m in mutants if m.id in args.only]
    if not mutants:
        print("no mutants selected", file=sys.stderr)
        return 2
    if args.list:
        for mutant in mutants:
            print(f"{mutant.area:10} {mutant.id:14} {mutant.kind:16} {mutant.file}  {mutant.note}")
        return 0
    results = run_campaign(mutants, args.timeout)
    print("\n".join(summary(results)))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0 if all(r["outcome"].startswith("killed") for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
