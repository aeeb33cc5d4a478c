"""CI's mutation check: a fixed small sample of the mutants of the judging functions a change
touched, each run against its area's self-tests, inside a hard time budget.

    python tools/mutation_ci.py                       # the last commit (CI: main after a landing)
    python tools/mutation_ci.py --changed origin/main  # a branch against its base
    python tools/mutation_ci.py --at-most 12 --budget 60

mutmut 3 generates the mutants (build/mutation/ci/AREA/mutants/, as tools/mutation.py does);
its own `mutmut run` is not used here: it first runs every test of the area under a tracer to
learn which tests reach which function, which alone takes longer than CI's budget. Instead each
sampled mutant is switched on (MUTANT_UNDER_TEST, mutmut's own switch) for one pytest run of the
area's tests with -x, which stops at the first test that catches it.

The run fails when a sampled mutant survives (its diff is printed) unless tests/mutation/
survivors.md lists it as equivalent; when a test that caught a mutant also fails without one
(then every mutant looks caught); and when git cannot say what changed. Mutants left when the
budget is spent are reported as not checked, not as caught. When no judging file changed, it
says so and passes.
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import itertools
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from mutation import (
    AREAS,
    IMPORT_SUITES_BY_PATH,
    REPO,
    WORK,
    copy_checkout,
    git,
    naming_files,
    write_config,
)

SURVIVORS = REPO / "tests" / "mutation" / "survivors.md"
# mutmut's mutant generation, without the rest of `mutmut run` (run in the area's copy).
GENERATE = """
from pathlib import Path
from mutmut.__main__ import create_mutants
from mutmut.mutation.trampoline import set_mutant_under_test
from mutmut.utils.file_utils import copy_also_copy_files, copy_src_dir, setup_source_paths
set_mutant_under_test("mutant_generation")
Path("mutants").mkdir(exist_ok=True)
copy_src_dir()
copy_also_copy_files()
setup_source_paths()
create_mutants(2)
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--changed", metavar="BASE", default="HEAD~1", help="default: HEAD~1")
    parser.add_argument("--at-most", type=int, default=12, help="mutants tested (default 12)")
    parser.add_argument("--budget", type=float, default=60, help="seconds in all (default 60)")
    parser.add_argument("--jobs", type=int, default=2, help="mutants tested at once (default 2)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    touched = changed_lines(args.changed)
    if touched is None:
        # A checkout one commit deep has no parent to diff: nothing mutated, and the line above
        # says so; a BASE that a full clone lacks is a usage error.
        return 0 if shallow_clone() else 1
    plan = {
        name: [f for f in sorted(touched) if any(fnmatch.fnmatch(f, p) for p in area.files)]
        for name, area in AREAS.items()
    }
    plan = {name: files for name, files in plan.items() if files}
    if not plan:
        print(f"mutation (CI): no judging file changed since {args.changed}: nothing to mutate")
        return 0
    candidates = {}  # mutant -> area
    for name, files in plan.items():
        if time.monotonic() - started > args.budget / 2:  # a landing that touched many areas
            print(f"mutation (CI): {name}: not mutated, half the budget went on generating")
            continue
        for mutant in area_mutants(name, files, touched):
            candidates[mutant] = name
    chosen = spread(sorted(candidates), args.at_most)
    print(
        f"mutation (CI): {len(candidates)} mutants in the judging functions changed since "
        f"{args.changed} ({', '.join(f for files in plan.values() for f in files)}); "
        f"testing {len(chosen)}, spread evenly",
        flush=True,
    )
    print(f"mutation (CI): mutants generated in {time.monotonic() - started:.0f} s", flush=True)
    deadline = started + 0.9 * args.budget  # the rest: the clean run of the tests that caught
    # First every mutant against the test files that name its function, then the ones still
    # alive against the whole selection: one slow survivor does not starve the others.
    with ThreadPoolExecutor(args.jobs) as pool:
        first = dict(pool.map(lambda m: (m, test_mutant(m, candidates[m], deadline, True)), chosen))
        alive = [m for m, (status, _) in first.items() if status == "alive"]
        then = dict(pool.map(lambda m: (m, test_mutant(m, candidates[m], deadline, False)), alive))
    outcomes = [(m, *then.get(m, first[m])) for m in chosen]
    return judge(outcomes, candidates, started, started + args.budget)


def shallow_clone() -> bool:
    return git("rev-parse", "--is-shallow-repository").strip() == "true"


def changed_lines(base: str) -> dict[str, set[int]] | None:
    """file -> the line numbers (in today's file) the change since `base` added or touched."""
    try:
        git("rev-parse", "--verify", "--quiet", f"{base}^{{commit}}")
    except subprocess.CalledProcessError:
        if shallow_clone():
            print(
                f"mutation (CI): not checked: {base} is not in this shallow clone "
                "(fetch with --depth 2 or more to mutate what the last commit changed)"
            )
            return None
        print(f"mutation (CI): cannot tell what changed: {base} is no commit here")
        return None
    touched: dict[str, set[int]] = {}
    for diff in (git("diff", "-U0", f"{base}...HEAD"), git("diff", "-U0", "HEAD")):
        file = None
        for row in diff.splitlines():
            if row.startswith("+++ "):
                file = row[6:] if row.startswith("+++ b/") else None
            elif row.startswith("@@") and file:
                start, _, count = re.match(r"@@ -\S+ \+(\d+)(,(\d+))? @@", row).groups()
                first, n = int(start), int(count) if count is not None else 1
                # A deletion (n == 0) touches the line it was removed before.
                touched.setdefault(file, set()).update(range(first, first + max(n, 1)))
    return touched


def area_mutants(name: str, files: list[str], touched: dict[str, set[int]]) -> list[str]:
    """The mutants of the changed functions in `files`, generated in the area's CI copy."""
    workdir = WORK / "ci" / name
    copy_checkout(workdir)
    write_config(workdir / "pyproject.toml", files, AREAS[name])
    with open(workdir / "conftest.py", "a") as conftest:
        conftest.write(IMPORT_SUITES_BY_PATH)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    made = subprocess.run(
        [sys.executable, "-c", GENERATE], cwd=workdir, env=env, capture_output=True, text=True
    )
    if made.returncode != 0:
        sys.exit(f"mutation (CI): mutmut could not generate the mutants:\n{made.stderr[-3000:]}")
    # An installed rigcheck found before the mutated copy would make every mutant survive.
    where = subprocess.run(
        [sys.executable, "-c", "import rigcheck; print(rigcheck.__file__)"],
        cwd=workdir / "mutants", env=env, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    if not Path(where).is_relative_to(workdir / "mutants"):
        sys.exit(f"mutation (CI): pytest in {workdir / 'mutants'} imports rigcheck from {where}")
    mutants = []
    for file in files:
        meta = json.loads((workdir / "mutants" / f"{file}.meta").read_text())["exit_code_by_key"]
        names = changed_functions(REPO / file, touched.get(file, set()))
        module = file.removesuffix(".py").replace("/", ".")
        mutants += [m for m in meta if m.removeprefix(module + ".").split("__mutmut_")[0] in names]
    return mutants


def changed_functions(path: Path, lines: set[int]) -> set[str]:
    """mutmut's names (x_f, xǁClassǁf) of the functions and methods that hold a changed line."""
    names = set()
    for node in ast.parse(path.read_text()).body:
        methods = node.body if isinstance(node, ast.ClassDef) else [node]
        for function in methods:
            is_function = isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
            if is_function and lines & set(range(function.lineno, function.end_lineno + 1)):
                owner = f"ǁ{node.name}ǁ" if node is not function else "_"
                names.add(f"x{owner}{function.name}")
    return names


def spread(names: list[str], at_most: int) -> list[str]:
    """At most `at_most` of `names`, evenly spaced (the same sample on every run)."""
    if len(names) <= at_most:
        return names
    return [names[i * len(names) // at_most] for i in range(at_most)]


def test_mutant(mutant: str, area: str, deadline: float, naming: bool) -> tuple[str, str]:
    """(status, pytest's output) for one mutant. naming: against the test files that name its
    function (most mutants are caught there, and collecting only them is quick): 'caught',
    'alive' or 'not checked'; else against the area's whole selection: 'caught', 'survived' or
    'not checked'."""
    workdir = WORK / "ci" / area / "mutants"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env |= {"CI": "1", "MUTANT_UNDER_TEST": mutant, "RIGCHECK_REPORT_DIR": str(workdir / "rep")}
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--rootdir=."]
    tests = selection(area)
    if naming:
        files = naming_files(workdir, tests, mutant)
        if not files:
            return "alive", ""
        deselect = [arg for flag, node in itertools.pairwise(tests) if flag == "--deselect"
                    for arg in (flag, node)]  # fmt: skip
        tests = files + deselect
    left = deadline - time.monotonic()
    if left < 3:
        return "not checked", ""
    try:
        done = subprocess.run(
            [*command, *tests], cwd=workdir, env=env, capture_output=True, text=True, timeout=left
        )
    except subprocess.TimeoutExpired:
        return "not checked", ""
    output = done.stdout + done.stderr
    if done.returncode == 1:
        return "caught", output
    return ("alive" if naming else "survived"), output


def selection(area: str) -> list[str]:
    config = (WORK / "ci" / area / "pyproject.toml").read_text()
    found = re.search(r"^pytest_add_cli_args_test_selection = (.*)$", config, re.M)
    return json.loads(found.group(1))


def judge(outcomes: list[tuple[str, str, str]], areas: dict[str, str], started: float,
          deadline: float) -> int:  # fmt: skip
    equivalent = listed_equivalents()
    failed, killers = False, {}
    for mutant, status, output in outcomes:
        if status == "survived" and is_listed(mutant, areas[mutant], equivalent):
            status = "survived, listed as equivalent in tests/mutation/survivors.md"
        print(f"  {mutant}: {status}")
        if status == "survived":
            failed = True
            print(indent(diff_of(mutant, areas[mutant])))
            print(indent("the tests passed with it: " + output.strip().splitlines()[-1]))
            print(indent("kill it with a test, or list it with why in tests/mutation/survivors.md"))
        for test in (
            re.findall(r"^FAILED (.+?)(?: - |$)", output, re.M) if status == "caught" else []
        ):
            if test.startswith("tests/"):  # not the suite's own lines a pytester run printed
                killers.setdefault(areas[mutant], set()).add(test)
    for area, tests in killers.items():  # a test failing without a mutant catches every one
        workdir = WORK / "ci" / area / "mutants"
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"CI": "1"}
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir=."]
        left = max(deadline - time.monotonic(), 5)
        try:
            clean = subprocess.run([*command, *sorted(tests)], cwd=workdir, env=env, text=True,
                                   capture_output=True, timeout=left)  # fmt: skip
        except subprocess.TimeoutExpired:  # `pytest tests` in the same CI run still says it
            print(f"  {area}: no time left to run the tests that caught mutants without one")
            continue
        if clean.returncode != 0:
            failed = True
            print(f"  {area}: tests that caught mutants fail without one:\n{clean.stdout[-2000:]}")
    counts = {s: sum(o[1] == s for o in outcomes) for s in ("caught", "survived", "not checked")}
    print(
        f"mutation (CI): {counts['caught']} caught, {counts['survived']} survived, "
        f"{counts['not checked']} not checked within the budget; "
        f"{time.monotonic() - started:.0f} s"
    )
    return 1 if failed else 0


def diff_of(mutant: str, area: str) -> str:
    mutmut = Path(sys.executable).with_name("mutmut")
    shown = subprocess.run(
        [str(mutmut), "show", mutant], cwd=WORK / "ci" / area, capture_output=True, text=True
    )
    text = shown.stdout
    return text[text.index("--- ") :] if "--- " in text else text + shown.stderr


def listed_equivalents() -> set[tuple[str, str]]:
    """(area, mutant) for each row of survivors.md's 'Equivalent' tables; `_8` after a name
    means the same function's mutant 8."""
    listed, inside = set(), False
    for row in SURVIVORS.read_text().splitlines():
        if row.startswith("#"):
            inside = "equivalent" in row.lower()
        elif inside and row.startswith("| ") and not row.startswith("| area"):
            cells = [c.strip() for c in row.strip("|").split("|")]
            last = ""
            for name in re.findall(r"`([^`]+)`", cells[1]):
                last = last.rpartition("_")[0] + name if name.startswith("_") and last else name
                listed.add((cells[0], last))
    return listed


def is_listed(mutant: str, area: str, equivalent: set[tuple[str, str]]) -> bool:
    """Whether survivors.md lists this mutant of this area: by its function's mutant name
    (`x_f__mutmut_3`) or with its module in front (`cli.x_f__mutmut_3`), as the tables write it."""
    return any(a == area and (mutant == n or mutant.endswith(f".{n}")) for a, n in equivalent)


def indent(text: str) -> str:
    return "\n".join(f"      {row}" for row in text.splitlines())


if __name__ == "__main__":
    sys.exit(main())
