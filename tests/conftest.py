"""The self-tests' settings: hypothesis profiles (`default` locally, `ci`: fixed seed, bounded,
on CI), CI's two passes (parallel, then `serial`), and a frozen heap after collection."""

import gc
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("default", max_examples=100)
# A fixed seed so CI failures reproduce; fewer examples and no per-example deadline so the run
# stays well inside CI's time on a 2-core machine.
settings.register_profile("ci", derandomize=True, max_examples=40, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "default")

# The suites' runs inside the self-tests keep no history (not in the user's data folder, and not
# in one SQLite file that parallel runs would lock): tests/history names its own stores.
os.environ["RIGCHECK_HISTORY"] = "none"


# --- CI on two cores: the xdist pass and the serial pass (tox.ini, selftest) ---
# `pytest tests -n 2 -m "not serial"` runs most tests two at a time; `pytest tests -m serial`
# then runs these alone. Each entry measures live or depends on wall time: two at once would
# measure each other or miss their deadlines. A live measurement in the parallel pass fails,
# naming this list (`parallel_pass_measures_nothing`), where it runs in this process.
SERIAL = {
    "perf/test_plugin_runs.py::test_a_live_cpu_measurement_is_stored_per_class_with_its_figures",
    "foundation/test_live_and_replayed_sessions.py::test_cpu_class_passes_live_on_this_machine",
    "reports/test_run_endings.py::test_a_real_regression_is_exit_1_and_verdict_regressed",
    "memory/test_plan.py::test_small_plan_fits_the_cpu_class_live",
    "memory/test_time_to_train.py::test_cpu_estimate_is_within_25_percent_of_a_measured_step",
    # A subprocess run of the suites interrupted by signals, each step with a 60 s deadline.
    "reports/test_report_runs.py::test_ctrl_c_mid_run_leaves_a_valid_partial_certificate",
    "reports/test_report_runs.py::test_a_killed_run_leaves_what_it_measured_marked_partial",
    "reports/test_run_endings.py::test_sigterm_ends_like_ctrl_c_with_every_report",
    "reports/test_run_endings.py::test_a_burst_of_ctrl_c_still_ends_cleanly_with_exit_2",
    "distributed/test_gloo_live.py",  # torchrun ranks, a watchdog and a rank that stops answering
    "distributed/test_two_agents_live.py",  # two torchrun agents meeting on a port
    "distributed/test_pairs_live.py",  # torchrun node pairs: a slow node named by bandwidth
    "slurm/test_sbatch_example.py",  # a Slurm cluster's daemons and a gloo job through sbatch
    "slurm/test_gate_on_slurm.py",  # a Slurm cluster's daemons, drained and resumed by the gate
    "gate/test_quick_tier_benchmark.py",  # the cpu quick tier live, its wall time benchmarked
    "blame/test_blame_live.py",  # torchrun ranks, one stopped by SIGSTOP, one slowed
    # A check held past a 5 s tier budget: the budget is wall time.
    "gate/test_tiers.py::test_a_check_that_overruns_the_deadline_ends_the_run_incomplete",
}
TESTS = Path(__file__).resolve().parent


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "serial: runs alone, in CI's second pass (SERIAL here)")
    from skip_guard import install

    install()  # a skip inside pytest.raises(X) fails instead of hiding a broken path


def pytest_report_header(config: pytest.Config) -> str:
    """Which classes the per-class self-tests take this run, and how to repeat it."""
    from class_turns import describe

    return describe()


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """CI's serial pass (`-m serial`) collects only the files SERIAL names. Only an entry of
    SERIAL marks a test `serial` (below), so no other file holds a test the pass would select,
    and collecting the whole tree first cost the pass as long as its shortest live tests."""
    if config.option.markexpr != "serial" or not collection_path.name.startswith("test_"):
        return None
    if collection_path.suffix != ".py" or TESTS not in collection_path.parents:
        return None
    file = collection_path.relative_to(TESTS).as_posix()
    return file not in {entry.split("::")[0] for entry in SERIAL} or None


@pytest.hookimpl(tryfirst=True)  # before -m deselects by it
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    modules = {}  # file -> its module, for every test file collected
    for item in items:
        path = Path(item.path).resolve()
        if TESTS not in path.parents:
            continue
        file = path.relative_to(TESTS).as_posix()
        modules[file] = getattr(item, "module", None)
        if SERIAL & {file, f"{file}::{item.originalname}"}:
            item.add_marker(pytest.mark.serial)
    # A renamed test would quietly join the parallel pass: say so instead. (Read from the module,
    # so a run of a few node ids from the file is not taken for a rename.)
    stale = sorted(
        entry
        for entry in SERIAL
        if "::" in entry
        and entry.split("::")[0] in modules
        and not hasattr(modules[entry.split("::")[0]], entry.split("::")[1])
    )
    if stale:
        raise pytest.UsageError(f"tests/conftest.py SERIAL: no such test {stale}")


def pytest_collection_finish(session: pytest.Session) -> None:
    """Everything alive after collection (torch, the test modules, hypothesis) lives to the end:
    gc.freeze() keeps every later collection from walking it again. The in-process replays each
    end with a full gc.collect() (pytest's unraisable-exception check): over half a million
    objects, about 0.3 s a replay, most of test_fact_mutations.py's time."""
    gc.collect()
    gc.freeze()


XDIST_VARIABLES = ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID")


@pytest.fixture(autouse=True)
def parallel_pass_measures_nothing(request: pytest.FixtureRequest, monkeypatch):
    """On an xdist worker: the suites a test runs (in this process or a subprocess) see a user's
    environment, not xdist's (pytest-benchmark would switch itself off, the perf guard would
    refuse), and a live measurement outside SERIAL fails instead of timing beside another test."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        return
    if os.environ.get("RIGCHECK_REPORT_DIR"):  # a report folder each: no wait on its run lock
        monkeypatch.setenv("RIGCHECK_REPORT_DIR", f"{os.environ['RIGCHECK_REPORT_DIR']}/{worker}")
    for name in XDIST_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    if request.node.get_closest_marker("serial"):
        return
    from rigcheck.measure import check

    def refuse(entry, *args, **kwargs):
        pytest.fail(
            f"{request.node.nodeid} measures {entry.key} live in the parallel pass: "
            "add it to SERIAL in tests/conftest.py",
            pytrace=False,
        )

    monkeypatch.setattr(check, "run_live", refuse)


@pytest.fixture(autouse=True, scope="session")
def measurement_lock_of_the_tests(tmp_path_factory: pytest.TempPathFactory):
    """The suites the self-tests run take a lock file of their own worker's, not the machine's
    (rigcheck/measure/machine_lock.py): a rigcheck measuring elsewhere never holds a test up."""
    from rigcheck.measure.machine_lock import ENV

    os.environ[ENV] = str(tmp_path_factory.getbasetemp() / "measure.lock")


@pytest.fixture(autouse=True)
def measurement_lock_released():
    """A test that measured in this process leaves the lock as a finished run would."""
    yield
    from rigcheck.measure import machine_lock

    machine_lock.release()


@pytest.fixture(autouse=True)
def _no_stale_submodules(request: pytest.FixtureRequest) -> None:
    """A test that runs pytest in-process starts from the modules a fresh import would give: the
    last such test's pytester teardown left stale submodule attributes (tests/module_state.py)."""
    if "pytester" in request.fixturenames:
        from module_state import forget_unloaded_submodules

        forget_unloaded_submodules()


@pytest.fixture(scope="session")
def chromium() -> str:
    """Headless Chromium's path, for the pages opened in a real browser (the node report, the
    fleet page). Skips where it is not installed, unless RIGCHECK_REQUIRE_CHROMIUM=1 (CI)."""
    found = next(filter(None, map(shutil.which, ("chromium", "chromium-browser"))), None)
    if found is None:
        if os.environ.get("RIGCHECK_REQUIRE_CHROMIUM") == "1":
            pytest.fail("RIGCHECK_REQUIRE_CHROMIUM=1 but no chromium on PATH")
        pytest.skip("headless Chromium not installed: apt-get install chromium (CI installs it)")
    return found


@pytest.fixture(scope="session")
def cpu_snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This machine's facts, recorded once per process with the real command (`rigcheck facts`):
    replaying them keeps a run to a few seconds. tests/foundation and tests/reports each recorded
    their own (a torch probe process each, about a fifth of either folder's longest setup)."""
    path = tmp_path_factory.mktemp("facts") / "machine.json"
    cli = [sys.executable, "-m", "rigcheck", "facts", "-o", str(path)]
    subprocess.run(cli, check=True, capture_output=True, timeout=300)
    return path


@dataclass
class LiveRun:
    ret: int
    output: str  # stdout and stderr together
    report: Path  # its --report-dir; the collective job's files in report/collectives


@pytest.fixture(scope="session")
def live_cpu_run(tmp_path_factory: pytest.TempPathFactory) -> LiveRun:
    """One live `pytest -m cpu` of the suites on this machine, as pytester's subprocess runs it
    (serial pass): the live session test judges its verdict, the gloo test its torchrun job.
    Each ran its own live job before, the serial pass paying the torchrun job twice."""
    folder = tmp_path_factory.mktemp("live-cpu")
    report = folder / "report"
    command = [sys.executable, "-mpytest", f"--basetemp={folder / 'basetemp'}",
               "-p", "no:cacheprovider", "-m", "cpu", f"--report-dir={report}",
               str(TESTS.parent / "suites")]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}  # as pytester's
    env.update(HOME=str(folder), PY_COLORS="0")
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True,
                          timeout=900)  # fmt: skip
    return LiveRun(done.returncode, done.stdout + done.stderr, report)
