"""The perf suite's pytest plugin: replay seam, benchmark storage per class, machine_info.

- `--replay-measurements FILE` judges recorded or synthetic figures (fixtures/measurements/)
  instead of timing kernels: with `--facts=SNAPSHOT` it replays a GPU machine on CI.
- `--record-measurements FILE` writes a live session's figures in that same format.
- pytest-benchmark stores every live run under reports/benchmarks/<class>/ (unless
  --benchmark-storage is given), so `--benchmark-compare` compares like with like; its
  machine_info carries the GPUs, driver, clocks, power limit and torch/CUDA versions. The
  folder is made when a run is stored, never left empty in the user's folder.
- The terminal summary lists every measurement with its wall time.

Light on import: nothing here imports torch.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

import pytest

from rigcheck.measure import machine_lock
from rigcheck.measure.check import PerfCheck, PerfSession
from rigcheck.measure.device import MeasuredDevice, measured_devices
from rigcheck.measure.replay import ReplayError, load_replay, recorded_file
from rigcheck.measure.rocm_env import prepare_rocm_tf32

PERF_SESSION = pytest.StashKey[PerfSession]()
ROCM_TF32_KEY = pytest.StashKey[str]()
# The folders rigcheck's storage choice would make (that were not there): pytest-benchmark
# makes its storage folder as it starts, timed or not; rigcheck takes them back if left empty.
STORAGE_MADE = pytest.StashKey[list[Path]]()
DEFAULT_STORAGE = "file://./.benchmarks"  # pytest-benchmark's own default
NO_CLASS = "unknown-class"  # a live run no class fits: its timings are stored apart
UNUSED_FIXTURE = "ignore:Benchmark fixture was not used at all"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rigcheck", "rigcheck: machine conformance")
    group.addoption(
        "--replay-measurements",
        metavar="FILE",
        help="judge the recorded or synthetic figures in FILE instead of timing kernels "
        "(fixtures/measurements/); pair it with --facts=SNAPSHOT",
    )
    group.addoption(
        "--benchmark-table",
        action="store_true",
        help="print pytest-benchmark's timing table (shown anyway with -v or --benchmark-compare)",
    )
    group.addoption(
        "--record-measurements",
        metavar="FILE",
        help="write this run's measured figures to FILE, in the --replay-measurements format",
    )


@pytest.hookimpl(tryfirst=True)  # before pytest-benchmark reads its options (trylast)
def pytest_configure(config: pytest.Config) -> None:
    # Before any probe imports torch: ROCm torch reads it once (rigcheck/measure/rocm_env.py).
    config.stash[ROCM_TF32_KEY] = prepare_rocm_tf32()
    session = PerfSession(facts_replayed_from=config.getoption("--facts", None))
    replay = config.getoption("--replay-measurements")
    if replay:
        try:
            session.replay = load_replay(replay)
        except ReplayError as exc:
            raise pytest.UsageError(str(exc)) from None
        config.option.benchmark_disable = True  # nothing is timed: nothing to store
    config.stash[PERF_SESSION] = session
    if not _wants_benchmark_table(config):  # 210 columns of timings bury the verdict (issue 24)
        config.option.benchmark_quiet = True
    # The perf fixture asks for `benchmark` in every check; a check that skips or fails
    # before timing anything leaves it unused, which pytest-benchmark would call a warning.
    config.addinivalue_line("filterwarnings", UNUSED_FIXTURE)
    if _storage_is_default(config):  # never pytest-benchmark's ./.benchmarks in the user's cwd
        storage = _storage_for(config, _named_class(config) or NO_CLASS)
        config.stash[STORAGE_MADE] = _missing_folders(Path(storage.removeprefix("file://")))
        config.option.benchmark_storage = storage


def pytest_unconfigure(config: pytest.Config) -> None:
    """The run is over: another rigcheck on this machine may measure now."""
    machine_lock.release()
    _take_back_empty_storage(config)  # after pytest-benchmark stored the run, if it did


def _wants_benchmark_table(config: pytest.Config) -> bool:
    """-v, --benchmark-table, or a comparison (the table is where it shows)."""
    compare = getattr(config.option, "benchmark_compare", None)
    return bool(config.option.verbose > 0 or config.getoption("--benchmark-table") or compare)


def _named_class(config: pytest.Config) -> str | None:
    """The class named in -m, if any (rigcheck.plugin makes two a usage error)."""
    from rigcheck.spec import known_classes

    classes = set(known_classes())
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", config.option.markexpr or "")
    return next((w for w in words if w in classes), None)


def _storage_is_default(config: pytest.Config) -> bool:
    return getattr(config.option, "benchmark_storage", None) in (None, DEFAULT_STORAGE)


def _storage_is_rigchecks(config: pytest.Config) -> bool:
    """The storage is rigcheck's choice (the user gave no --benchmark-storage)."""
    return STORAGE_MADE in config.stash


def _missing_folders(path: Path) -> list[Path]:
    """path and each of its parents that does not exist yet, deepest first."""
    missing = []
    while not path.exists() and path.parent != path:
        missing.append(path)
        path = path.parent
    return missing


def _take_back_empty_storage(config: pytest.Config) -> None:
    """Remove the storage folders pytest-benchmark made at start if nothing went in them: a
    stored run makes them again (FileStorage.get), and a comparison reads a missing folder as
    an empty one."""
    for folder in config.stash.get(STORAGE_MADE, []):
        try:
            folder.rmdir()  # only ever an empty folder
        except FileNotFoundError:
            continue  # taken back already (at the session's start)
        except OSError:
            return  # a stored run is in it


def _storage_for(config: pytest.Config, class_name: str) -> str:
    from rigcheck.reports.location import reports_root

    return f"file://{reports_root(config.rootpath) / 'benchmarks' / class_name}"


# Fact checks first (they also check the GPUs are idle), then the light measurements, heavy
# stress last: a bandwidth test right after a GEMM burn reads low (NVIDIA/DCGM#272).
PERF_ORDER = ["test_host_link", "test_memory_bandwidth", "test_matmul", "test_attention"]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    perf_items = [i for i in items if i.get_closest_marker("perf") and "perf" in i.fixturenames]
    if perf_items:
        chosen = set(perf_items)
        rest = [i for i in items if i not in chosen]
        items[:] = rest + sorted(perf_items, key=_perf_rank)
        _point_storage_at_detected_class(config)


def pytest_sessionstart(session: pytest.Session) -> None:
    """`--benchmark-compare=ID` naming no stored run is a usage error, said before anything is
    collected or judged and no report written (pytest-benchmark only warns, after the verdict)."""
    config = session.config
    _take_back_empty_storage(config)  # every pytest_configure has run: the folders are made
    bench = getattr(config, "_benchmarksession", None)
    if bench is None or config.getoption("--replay-measurements"):
        return
    if not bench.compare or bench.compare is True:  # none, or the latest run (may be none yet)
        return
    _point_storage_at_detected_class(config)  # the detected class's storage, not the default
    if bench.compared_mapping:
        return
    raise pytest.UsageError(
        f"--benchmark-compare={bench.compare}: no stored run matches it in {bench.storage}. "
        "Leave the value out to compare with the latest run, or list the stored runs with "
        "`pytest-benchmark list`"
    )


def _perf_rank(item: pytest.Item) -> int:
    module = Path(item.path).stem
    return PERF_ORDER.index(module) if module in PERF_ORDER else len(PERF_ORDER)


def _point_storage_at_detected_class(config: pytest.Config) -> None:
    """A detected (not named) class: point pytest-benchmark's storage at it now."""
    bench = getattr(config, "_benchmarksession", None)
    if bench is None or config.getoption("--replay-measurements"):
        return
    if _named_class(config) or not _storage_is_rigchecks(config):
        return
    from pytest_benchmark.utils import load_storage

    from rigcheck.plugin.core import resolve_target

    target = resolve_target(config)
    if target.spec is None:
        return
    storage = _storage_for(config, target.spec.name)
    made = _missing_folders(Path(storage.removeprefix("file://")))
    config.stash[STORAGE_MADE] = made + config.stash[STORAGE_MADE]
    bench.storage = load_storage(
        storage, logger=bench.logger, default_machine_id=bench.machine_id, netrc=""
    )
    if bench.compare:
        bench.handle_loading()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """One perf check per device the facts list (gpu0, gpu1, ... or cpu)."""
    if "perf_device" in metafunc.fixturenames:
        devices = session_devices(metafunc.config)
        metafunc.parametrize("perf_device", devices, ids=[d.param_id for d in devices])


def session_devices(config: pytest.Config) -> list[MeasuredDevice]:
    from rigcheck.plugin.core import resolve_target

    target = resolve_target(config)
    backend = target.spec.backend if target.spec else ("cuda" if target.facts.devices else "cpu")
    devices = measured_devices(target.facts, backend)
    return devices or [MeasuredDevice("none", "no accelerator", backend)]


@pytest.fixture
def perf_devices(request: pytest.FixtureRequest) -> list[MeasuredDevice]:
    """Every device the perf checks measure, for the spread checks across them."""
    return [d for d in session_devices(request.config) if d.ident != "none"]


@pytest.fixture
def perf(request, spec, facts, benchmark, record_property):
    """Runs perf checks: perf.check(key, device) and perf.spread(key, devices)."""
    yield PerfCheck(
        request.config.stash[PERF_SESSION], request, spec, facts, benchmark, record_property
    )
    _autosave_when_stored(request.config, benchmark)


def _autosave_when_stored(config: pytest.Config, benchmark: Any) -> None:
    """Every run that timed something is stored (unless --benchmark-save names it already).

    Set only once timings exist: autosave with nothing to save makes pytest-benchmark warn.
    """
    bench = getattr(config, "_benchmarksession", None)
    if bench is None or not getattr(benchmark, "stats", None) or bench.save or bench.autosave:
        return
    from pytest_benchmark.utils import get_tag

    bench.autosave = get_tag()  # what --benchmark-autosave stores: the commit and the time


def pytest_report_header(config: pytest.Config) -> list[str]:
    session = config.stash.get(PERF_SESSION, None)
    if session is None or session.replay is None:
        return []
    return [f"rigcheck perf: figures replayed from {session.replay.source} ({session.replay.kind})"]


def pytest_benchmark_update_machine_info(config: pytest.Config, machine_info: dict) -> None:
    """The facts that make two benchmark runs comparable, or flag that they are not."""
    from rigcheck.plugin.core import SPECS_KEY, resolve_target

    if SPECS_KEY not in config.stash:
        return
    target = resolve_target(config)
    machine_info["rigcheck"] = machine_summary(target.facts.data, target.spec and target.spec.name)


def machine_summary(facts: dict[str, Any], class_name: str | None) -> dict[str, Any]:
    """Stable facts only (max clocks, limits, versions): current clocks would differ every run."""
    software = facts.get("software", {})
    torch = software.get("torch", {}) if isinstance(software.get("torch"), dict) else {}
    driver = software.get("nvidia_driver", {})
    cpu = facts.get("host", {}).get("cpu", {})
    devices = facts.get("devices", []) if isinstance(facts.get("devices"), list) else []
    return {
        "class": class_name,
        "driver": driver.get("version") if isinstance(driver, dict) else None,
        "torch": torch.get("version"),
        "cuda": torch.get("cuda_version"),
        "hip": torch.get("hip_version"),
        "cpu": cpu.get("model") if isinstance(cpu, dict) else None,
        "devices": [_device_summary(d) for d in devices],
    }


def _device_summary(device: dict[str, Any]) -> dict[str, Any]:
    def part(key: str, field: str) -> Any:
        value = device.get(key)
        return value.get(field) if isinstance(value, dict) else None

    return {
        "name": device.get("name"),
        "pci_device_id": part("pci", "device_id"),
        "sm_max_mhz": part("clocks", "sm_max_mhz"),
        "mem_max_mhz": part("clocks", "mem_max_mhz"),
        "power_limit_w": part("power", "limit_w"),
    }


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    session = config.stash.get(PERF_SESSION, None)
    if session is None or not (session.results or session.unjudged):
        return
    terminalreporter.section("rigcheck perf: measurements and wall time")
    for _, m in session.unjudged:  # recorded, with the reason in the check's skip line
        wall = f"{m.wall_s:6.1f} s" if m.wall_s is not None else "  replay"
        terminalreporter.write_line(
            f"{wall}  NOT JUDGED  {m.key} on {m.device}: {m.value:,.4f} {m.unit}"
        )
    for r in session.results:
        m, j = r.measurement, r.judgement
        wall = f"{m.wall_s:6.1f} s" if m.wall_s is not None else "  replay"
        terminalreporter.write_line(
            f"{wall}  {j.verdict.upper():4}  {m.key} on {m.device}: {m.value:,.3f} {m.unit}"
            + (f" (best {m.best:,.3f})" if m.best else "")
            + (f", MFU {m.details['mfu']:.1%}" if m.details.get("mfu") else "")
        )
    if session.replay is None:
        total = sum(r.measurement.wall_s or 0 for r in session.results)
        total += sum(m.wall_s or 0 for _, m in session.unjudged)
        terminalreporter.write_line(f"{total:6.1f} s  measuring in all")


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = session.config.getoption("--record-measurements", None)
    perf = session.config.stash.get(PERF_SESSION, None)
    if not path or perf is None:
        return
    from rigcheck.plugin.core import TARGET_KEY

    target = session.config.stash.get(TARGET_KEY, None)
    name = target.spec.name if target and target.spec else None
    pairs = [(r.device.ident, r.measurement) for r in perf.results]
    pairs += [(device.ident, m) for device, m in perf.unjudged]
    when = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    note = f"recorded live by `pytest --record-measurements` at {when}"
    recorded = recorded_file(pairs, name, note)
    if target is not None:
        recorded["machine"] = machine_summary(target.facts.data, name)
    Path(path).write_text(json.dumps(recorded, indent=2) + "\n")
