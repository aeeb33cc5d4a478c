"""Mutation testing of rigcheck's judging code with mutmut, one area at a time.

    python tools/mutation.py                      # every area: ~10,000 mutants, many hours
    python tools/mutation.py --sample 30          # every area, a systematic 30%: ~30 min
    python tools/mutation.py verdict distributed  # some areas
    python tools/mutation.py --changed origin/main --budget 300   # CI: files a change touched
    python tools/mutation.py --list               # the areas, their files and their tests
    python tools/mutation.py --report             # tally the results so far, survivors named
    python tools/mutation.py --recheck verdict    # do today's tests kill the last survivors?
    python tools/mutation.py distributed --sample 20   # a systematic fifth of the mutants

(Python 3.11 or later: it reads pyproject.toml with tomllib.)

Each area is mutated in its own copy of the checkout (build/mutation/AREA/, mutmut's mutants/
inside it), against the self-tests that decide it, so areas run in parallel or one at a time
and a run's results stay for `cd build/mutation/AREA && mutmut show NAME`. The [tool.mutmut]
section of pyproject.toml is the shared configuration; this script only narrows its
only_mutate and its test selection per area. Prints per area: mutants, killed, survived, score
(killed + timeout over checked, mutmut's own formula), and writes build/mutation/summary.json.
Survivors judged equivalent are listed, with why, in tests/mutation/survivors.md.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import tomllib

REPO = Path(__file__).resolve().parents[1]
WORK = REPO / "build" / "mutation"
MUTMUT = Path(sys.executable).with_name("mutmut")


@dataclass(frozen=True)
class Area:
    files: tuple[str, ...]  # glob patterns, relative to the checkout
    tests: tuple[str, ...]  # the self-tests that decide them
    # Tests that run pytest in a subprocess elsewhere: under mutmut's stats run they inherit
    # MUTANT_UNDER_TEST=stats and fail looking for its config, and no mutant reaches them.
    deselect: tuple[str, ...] = ()


MEMORY_TESTS = """activations advice estimate fit_cli frameworks hf_config inference lora
model_state plan presets seed_rules units judged_boundaries deepspeed_estimators"""
MEMORY_MODULES = """activations advice architecture estimate frameworks hf_config inference lora
model_state optimizers parallel plan plugin precision presets quantization sharding units"""
AREAS = {
    "verdict": Area(
        ("rigcheck/verdict.py",),
        ("tests/boundaries/test_judging_rules.py", "tests/perf/test_replay_judging.py"),
    ),
    "measure-check": Area(
        ("rigcheck/measure/check.py",),
        (
            "tests/boundaries/test_judging_rules.py",
            "tests/boundaries/test_perf_floors.py",
            "tests/boundaries/test_perf_check_paths.py",
            "tests/perf",
        ),
        # mutmut's trampoline adds a frame to every function of check.py, so a warning's
        # stacklevel points into mutmut: this test fails there with or without a mutant.
        deselect=(
            "tests/boundaries/test_perf_check_paths.py::"
            "test_warnings_point_at_the_suite_check_that_raised_them",
        ),
    ),
    "suites-perf": Area(
        ("suites/perf/*.py",),
        (
            "tests/boundaries/test_perf_floors.py",
            "tests/boundaries/test_perf_check_paths.py",
            "tests/perf/test_replay_judging.py",
        ),
    ),
    "distributed": Area(
        ("rigcheck/distributed/results.py", "suites/distributed/test_collectives.py"),
        (
            "tests/boundaries/test_collective_rules.py",
            "tests/boundaries/test_collective_results.py",
            "tests/distributed/test_dist_replays.py",
            "tests/distributed/test_hang_diagnosis.py",
        ),
    ),
    # The recorded-node replays (tests/distributed/test_dist_replays.py) judge topology too,
    # far from its edges; at ~30 s a mutant that survives them, they stay out of the selection.
    "topology": Area(
        ("suites/distributed/test_topology.py",),
        ("tests/boundaries/test_topology_rules.py", "tests/boundaries/test_collective_rules.py"),
    ),
    # The judging helpers the fact checks call (typed.py: what a fact may hold; limits.py: the
    # spec's health limits) are mutated with them. The tests are the ones that decide the checks
    # at their limits: first the direct calls (a check called as a function on a class's spec
    # and synthetic devices: microseconds a decision), then the in-process replays at the
    # limits. Whole-suite replays (tests/replay/test_broken_variants.py, test_good_snapshots.py,
    # test_issue_mutations.py, ...) judge far from the limits and are far too slow per mutant:
    # mutmut's stats and clean passes over them alone took a 46-minute budget on 2 cores.
    "facts": Area(
        (
            "suites/facts/*.py",
            "rigcheck/require.py",
            "rigcheck/facts/typed.py",
            "rigcheck/facts/fact_type.py",
            "rigcheck/limits.py",
            "rigcheck/replay_rate.py",
        ),
        (  # the direct-call boundary tests first: --recheck stops at the first failure
            "tests/health/test_replay_rate.py",
            "tests/boundaries/test_fact_types.py",
            "tests/boundaries/test_amd_routing.py",
            "tests/boundaries/test_fact_checks.py",
            "tests/boundaries/test_fact_stack_checks.py",
            "tests/boundaries/test_fact_fabric_checks.py",
            "tests/boundaries/test_fact_rdma_checks.py",
            "tests/boundaries/test_fact_limits.py",
            "tests/replay/test_counter_checks.py",
            "tests/replay/test_replay_rate_checks.py",
            "tests/replay/test_unsupported_reads.py",
            "tests/boundaries/test_rocm_support_matrix.py",  # the ROCm support-matrix check
            "tests/realworld/test_kernel_log_corpus.py",  # the kernel-log checks on real lines
        ),
    ),
    "spec-detect": Area(
        ("rigcheck/spec.py", "rigcheck/spec_meaning.py", "rigcheck/detect.py"),
        (
            "tests/spec",
            "tests/foundation/test_detect.py",
            "tests/replay/test_class_selection.py",
        ),
        ("tests/spec/test_spec_meaning.py::test_a_bad_spec_file_is_a_usage_error_under_pytest",),
    ),
    # The fast tests that decide the estimates; the test_real_* files (torch models, a
    # two-rank FSDP step: ~20 s) and DeepSpeed's estimators agree with them, and cost a
    # minute per stats run, so they stay out of the per-mutant selection.
    # The estimate and the --plan check; the `rigcheck fit` command line and its table
    # (memory/cli.py, memory/report.py: 900 mutants of argument parsing and column titles)
    # are the memory-cli area.
    "memory": Area(
        (*(f"rigcheck/memory/{m}.py" for m in MEMORY_MODULES.split()), "suites/memory/*.py"),
        tuple(f"tests/memory/test_{name}.py" for name in MEMORY_TESTS.split()),
        (
            "tests/memory/test_fit_cli.py::test_the_rigcheck_command_runs_fit",
            "tests/memory/test_plan.py::test_small_plan_fits_the_cpu_class_live",
        ),
    ),
    "memory-cli": Area(
        ("rigcheck/memory/cli.py", "rigcheck/memory/report.py"),
        (
            "tests/memory/test_fit_cli_boundaries.py",
            "tests/memory/test_fit_cli.py",
            "tests/memory/test_estimate.py",
        ),
        ("tests/memory/test_fit_cli.py::test_the_rigcheck_command_runs_fit",),
    ),
    # Node-pair rounds (issue 16): the schedule, the judge that names a slow node or link,
    # and the suite check over a run folder. The live torchrun test stays out: minutes a run.
    "node-pairs": Area(
        (
            "rigcheck/distributed/pair_verdict.py",
            "rigcheck/distributed/run_folder.py",
            "rigcheck/distributed/pair_schedule.py",
            "suites/distributed/test_node_pairs.py",
        ),
        (
            "tests/distributed/test_pair_boundaries.py",
            "tests/distributed/test_pair_verdict.py",
            "tests/distributed/test_pair_verdict_few_nodes.py",
            "tests/distributed/test_pair_schedule.py",
            "tests/distributed/test_pair_worker.py",
        ),
    ),
    # A figure drifting from its own history, the right way round (a time rising, a rate falling).
    "history-trends": Area(
        ("rigcheck/history/trends.py", "rigcheck/history/direction.py"),
        ("tests/history/test_trends.py", "tests/history/test_trend_direction.py"),
    ),
    "burnin": Area(
        ("rigcheck/burnin/judge.py", "suites/burnin/*.py"),
        (
            "tests/burnin/test_judges.py",
            "tests/burnin/test_replay_faults.py",
            "tests/burnin/test_judge_boundaries.py",
            "tests/burnin/test_rdma_link_replays.py",
            "tests/burnin/test_nvrm_records.py",
        ),
    ),
    # RDMA between nodes (issue 28): port counters and their change over a run, NCCL-over-IB
    # rules, perftest parsing and the pair judge. The live torchrun test of the pair job stays
    # out (20 s a run).
    "rdma": Area(
        (
            "rigcheck/rdma/counter_verdict.py",
            "rigcheck/rdma/nccl_ib.py",
            "rigcheck/rdma/perftest.py",
            "rigcheck/rdma/perftest_run.py",
            "rigcheck/rdma/perftest_verdict.py",
            "suites/distributed/test_rdma_pairs.py",
            "suites/distributed/test_rdma_links_collectives.py",
        ),
        (
            "tests/rdma/test_counter_judging.py",
            "tests/rdma/test_nccl_ib_rules.py",
            "tests/rdma/test_perftest_parsing.py",
            "tests/rdma/test_rail_findings.py",
            "tests/replay/test_rdma_pairs_replay.py",
            "tests/distributed/test_rdma_links_collectives_replay.py",
        ),
    ),
    # The health gate's judging: drain or resume (slurm.py), what a job left (epilog.py), and
    # the one root-cause line (root_cause.py). Their unit tests take under a second.
    "gate": Area(
        ("rigcheck/gate/slurm.py", "rigcheck/gate/epilog.py", "rigcheck/reports/root_cause.py"),
        (
            "tests/gate/test_slurm_decide.py",
            "tests/gate/test_epilog.py",
            "tests/gate/test_root_cause.py",
            "tests/gate/test_epilog_scope.py",
            "tests/gate/test_slurm_failures.py",
        ),
    ),
}
# Appended to the copy's conftest.py (never the checkout's). The self-tests run the suites
# in-process (pytester); by default pytest imports suites/distributed/test_collectives.py as
# "test_collectives", but mutmut names (and switches on) its mutants as
# "suites.distributed.test_collectives...": without this, no mutant of a suite would ever run.
IMPORT_SUITES_BY_PATH = """

def pytest_configure(config):  # added by tools/mutation.py, in its copy only
    from pathlib import Path

    suites = Path(__file__).resolve().parent / "suites"
    paths = [Path(str(a).split("::")[0]).resolve() for a in config.args]
    if paths and all(p == suites or suites in p.parents for p in paths):
        config.option.importmode = "importlib"
"""
# pytest's exits that catch a mutant in --recheck: a test failed (1), the tests could not even
# be collected, e.g. an import-time error (2), pytest itself broke (3).
CAUGHT = (1, 2, 3)
STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", 34: "skipped"}
STATUS |= {36: "timeout", -24: "timeout", 24: "timeout", 152: "timeout", 255: "timeout"}
STATUS |= {None: "not checked"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("areas", nargs="*", help=f"default: all of {', '.join(AREAS)}")
    parser.add_argument(
        "--changed",
        metavar="BASE",
        help="mutate only the judging files changed since BASE (e.g. origin/main)",
    )
    parser.add_argument("--budget", type=float, default=3600, help="seconds for the whole run")
    parser.add_argument("--jobs", type=int, default=2, help="mutants tested at once (default 2)")
    parser.add_argument("--fail-under", type=float, help="exit 1 if an area scores below this %%")
    parser.add_argument(
        "--sample",
        type=int,
        default=100,
        choices=range(10, 101, 10),
        metavar="PERCENT",
        help="test a systematic sample: the mutants whose number ends in 1, 2, ... of 10 "
        "digits (10..100, default 100); the rest are reported as not checked",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="keep build/mutation/AREA as it is (its mutants, stats and results) and go on",
    )
    parser.add_argument(
        "--recheck",
        action="store_true",
        help="apply each survivor of an earlier run to a fresh copy of the checkout and run "
        "the area's tests as they are now: which survivors the new tests kill",
    )
    parser.add_argument(
        "--report",
        action="store_true",
        help="only tally the results already in build/mutation/AREA (also while it runs)",
    )
    parser.add_argument("--list", action="store_true", help="show what would be mutated, and exit")
    args = parser.parse_args(argv)
    unknown = [a for a in args.areas if a not in AREAS]
    if unknown:
        parser.error(f"unknown area {', '.join(unknown)}: choose from {', '.join(AREAS)}")
    plan = planned(args.areas or list(AREAS), args.changed)
    if not plan:
        print(f"no judging file changed since {args.changed}: nothing to mutate")
        return 0
    if args.list:  # what would be mutated, against which tests
        for name, files in plan.items():
            print(f"{name}: {' '.join(files)}\n    tests: {' '.join(AREAS[name].tests)}")
        return 0
    if args.report:
        for name, files in plan.items():
            if (WORK / name / "mutants").exists():
                result = tally(WORK / name, files)
                print(line(name, {**result, "seconds": "?"}))
                for survivor in result["survivors"]:
                    print(f"    {survivor}")
        return 0
    if args.recheck:
        for name in plan:
            still = recheck(name, AREAS[name])
            (WORK / f"recheck-{name}.json").write_text(json.dumps(still, indent=1) + "\n")
            print(f"{name}: {len(still)} survivors the tests still miss: {', '.join(still)}")
        return 0
    deadline = time.monotonic() + args.budget
    summary = {}
    for name, files in plan.items():
        left = deadline - time.monotonic()
        if left < 30:
            print(f"{name}: not run, the budget ({args.budget:.0f} s) is spent")
            continue
        summary[name] = run_area(name, files, AREAS[name], left, args)
        print(line(name, summary[name]), flush=True)
    WORK.mkdir(parents=True, exist_ok=True)
    path = WORK / "summary.json"  # areas run earlier (or side by side) keep their results
    earlier = json.loads(path.read_text()) if path.exists() else {}
    path.write_text(json.dumps({**earlier, **summary}, indent=1) + "\n")
    print(f"results: {WORK / 'summary.json'}; survivors: mutmut results in build/mutation/AREA")
    low = [n for n, s in summary.items() if args.fail_under and s["score"] < args.fail_under]
    return 1 if low else 0


def planned(names: list[str], base: str | None) -> dict[str, list[str]]:
    """area -> the files it mutates (only those changed since `base`, when given)."""
    tracked = git("ls-files", "-co", "--exclude-standard").splitlines()
    changed = None
    if base:
        changed = set(git("diff", "--name-only", f"{base}...HEAD").splitlines())
        changed |= set(git("diff", "--name-only", "HEAD").splitlines())  # uncommitted too
    plan = {}
    for name in names:
        files = [f for f in tracked if any(fnmatch.fnmatch(f, p) for p in AREAS[name].files)]
        files = [f for f in files if changed is None or f in changed]
        if files:
            plan[name] = sorted(files)
    return plan


def run_area(name: str, files: list[str], area: Area, budget: float, args) -> dict:
    workdir = WORK / name
    if not (args.resume and (workdir / "mutants").exists()):
        copy_checkout(workdir)
        write_config(workdir / "pyproject.toml", files, area)
        with open(workdir / "conftest.py", "a") as conftest:
            conftest.write(IMPORT_SUITES_BY_PATH)
    env = {**os.environ, "CI": "1", "RIGCHECK_REPORT_DIR": str(workdir / "reports")}
    env.pop("PYTHONPATH", None)  # mutmut puts its mutants/ first; the checkout must not shadow it
    command = ["nice", "-n", "10", str(MUTMUT), "run", "--max-children", str(args.jobs)]
    command += sample_patterns(args.sample)
    started = time.monotonic()
    with open(workdir / "mutmut.log", "w") as log:
        # Its own process group: at the budget, mutmut's fork server and workers stop with it.
        job = subprocess.Popen(
            command, cwd=workdir, env=env, stdout=log, stderr=log, start_new_session=True
        )
        try:
            job.wait(timeout=budget)
        except subprocess.TimeoutExpired:
            os.killpg(job.pid, signal.SIGTERM)
            job.wait()
            print(f"{name}: stopped at the budget; unchecked mutants are counted as such")
    result = tally(workdir, files)
    result["seconds"] = round(time.monotonic() - started)
    return result


def recheck(name: str, area: Area) -> list[str]:
    """The survivors of the last run of `name` that the current tests still miss."""
    workdir = WORK / name
    if not (workdir / "mutants").exists():
        return []
    survivors = tally(workdir, planned([name], None)[name])["survivors"]
    scratch = WORK / f"recheck-{name}"  # areas can be rechecked side by side
    copy_checkout(scratch)
    env = {**os.environ, "CI": "1", "RIGCHECK_REPORT_DIR": str(scratch / "reports")}
    env["PYTHONPATH"] = str(scratch)
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider"]
    command = ["nice", "-n", "10", *command, *present(scratch, area.tests)]
    clean = subprocess.run(command, cwd=scratch, env=env, capture_output=True, text=True)
    if survivors and clean.returncode != 0:  # else every mutant would look killed
        sys.exit(f"{name}: the tests fail without a mutant:\n{clean.stdout[-3000:]}")
    since = [f for f in naming_files(scratch, present(scratch, area.tests), "")
             if not (workdir / f).exists()]  # fmt: skip
    still = []
    for mutant in survivors:
        shown = subprocess.run(
            [str(MUTMUT), "show", mutant], cwd=workdir, capture_output=True, text=True
        ).stdout
        diff = shown[shown.index("--- ") :] if "--- " in shown else ""
        file = diff.splitlines()[0].removeprefix("--- ").strip() if diff else ""
        original = (scratch / file).read_text() if file else None
        patched = applied(original, diff) if original is not None else None
        if patched is None:
            print(f"{name}: {mutant}: cannot apply its diff; counted as surviving")
            still.append(mutant)
        else:
            (scratch / file).write_text(patched)
            tested = None
            # First the test files that name its function and those written since the run:
            # quick, and where most kills are.
            naming = naming_files(scratch, present(scratch, area.tests), mutant)
            naming += [f for f in since if f not in naming]
            if naming:
                first = [*command[: command.index("-p") + 2], *naming]
                tested = subprocess.run(first, cwd=scratch, env=env, capture_output=True, text=True)
            if tested is None or tested.returncode not in CAUGHT:
                tested = subprocess.run(
                    command, cwd=scratch, env=env, capture_output=True, text=True
                )
            verdict = "killed" if tested.returncode in CAUGHT else "survives"
            print(f"{name}: {mutant}: {verdict} (pytest exit {tested.returncode})", flush=True)
            if tested.returncode not in CAUGHT:
                still.append(mutant)
        if original is not None:
            (scratch / file).write_text(original)
    return still


def applied(text: str, diff: str) -> str | None:
    """`text` with mutmut's one-hunk diff applied, or None where its lines are not found once.
    (Its hunk is numbered from the function, not the file: `patch` anchors a hunk "at line 1"
    to the file's start and refuses it.)"""
    body = [row for row in diff.splitlines()[2:] if not row.startswith("@@")]
    before = "\n".join(row[1:] for row in body if not row.startswith("+")) + "\n"
    after = "\n".join(row[1:] for row in body if not row.startswith("-")) + "\n"
    return text.replace(before, after) if text.count(before) == 1 else None


def naming_files(root: Path, tests: list[str], mutant: str) -> list[str]:
    """The test files of a selection (under `root`) that name the mutant's function ('x_f',
    'xǁClassǁf' -> 'f', without leading underscores)."""
    function = mutant.rpartition(".")[2].split("__mutmut_")[0].split("ǁ")[-1]
    function = function.removeprefix("x_").lstrip("_")
    files = []
    for arg in tests:
        path = root / arg.split("::")[0]
        if arg.startswith("-") or "::" in arg or not path.exists():
            continue
        files += sorted(path.rglob("test_*.py")) if path.is_dir() else [path]
    return [str(f.relative_to(root)) for f in files if function in f.read_text()]


def sample_patterns(percent: int) -> list[str]:
    """mutmut name patterns for a systematic sample: every function's mutants whose number
    ends in one of `percent / 10` evenly spread digits ([] for all of them)."""
    if percent >= 100:
        return []
    count = percent // 10
    return [f"*__mutmut_*{i * 10 // count}" for i in range(count)]


def copy_checkout(workdir: Path) -> None:
    """The checkout's files as git sees them (tracked and new, not ignored)."""
    if workdir.exists():
        shutil.rmtree(workdir)
    for file in git("ls-files", "-co", "--exclude-standard").splitlines():
        source = REPO / file
        if source.is_file():
            (workdir / file).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, workdir / file)


def present(root: Path, tests: tuple[str, ...]) -> list[str]:
    """The area's test paths that exist (a test file may be added after the area was named)."""
    return [t for t in tests if (root / t.split("::")[0]).exists()]


def write_config(pyproject: Path, files: list[str], area: Area) -> None:
    """The shared [tool.mutmut] section, narrowed to this area's files and tests."""
    text = pyproject.read_text()
    config = tomllib.loads(text).get("tool", {}).get("mutmut", {})
    config["only_mutate"] = files
    # The spec tests read the README's class table; a copy must carry it.
    config["also_copy"] = sorted({*config.get("also_copy", []), "README.md"})
    selection = present(pyproject.parent, area.tests)
    config["pytest_add_cli_args_test_selection"] = selection + [
        arg for test in area.deselect for arg in ("--deselect", test)
    ]
    kept, inside = [], False
    for row in text.splitlines():
        if row.startswith("["):
            inside = row.strip() == "[tool.mutmut]"
        if not inside:
            kept.append(row)
    section = ["", "[tool.mutmut]"] + [f"{k} = {json.dumps(v)}" for k, v in config.items()]
    pyproject.write_text("\n".join(kept + section) + "\n")


def tally(workdir: Path, files: list[str]) -> dict:
    """Counts per status, per file and in all, and the survivors' names."""
    counts: dict[str, int] = {}
    per_file, survivors = {}, []
    for file in files:
        meta = workdir / "mutants" / f"{file}.meta"
        codes = json.loads(meta.read_text())["exit_code_by_key"] if meta.exists() else {}
        mine: dict[str, int] = {}
        for key, code in codes.items():
            status = STATUS.get(code, "suspicious")
            mine[status] = mine.get(status, 0) + 1
            if status in ("survived", "no tests"):
                survivors.append(key)
        per_file[file] = mine
        for status, n in mine.items():
            counts[status] = counts.get(status, 0) + n
    return {**score(counts), "counts": counts, "files": per_file, "survivors": sorted(survivors)}


def score(counts: dict[str, int]) -> dict:
    caught = counts.get("killed", 0) + counts.get("timeout", 0)
    checked = sum(counts.values()) - counts.get("not checked", 0) - counts.get("skipped", 0)
    return {"mutants": sum(counts.values()), "checked": checked, "caught": caught,
            "score": round(100 * caught / checked, 1) if checked else 0.0}  # fmt: skip


def line(name: str, result: dict) -> str:
    c = result["counts"]
    return (
        f"{name}: {result['score']:.1f}% ({result['caught']} of {result['checked']} checked "
        f"mutants caught; {c.get('survived', 0)} survived, {c.get('no tests', 0)} untested, "
        f"{c.get('not checked', 0)} not checked; {result['seconds']} s)"
    )


def git(*args: str) -> str:
    done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=True)
    return done.stdout


if __name__ == "__main__":
    sys.exit(main())
