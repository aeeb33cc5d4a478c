"""The burn-in's pytest options, marker and session fixture (suites/burnin).

- `--burn-in=DUR` (20s, 60s, 5m, 1h) loads every device at once for DUR, in a child process
  (rigcheck.burnin.record), and saves the trace as burnin-trace.json in the run's report folder.
- `--burn-in-trace=FILE` judges a saved or synthetic trace instead, as --facts replays facts.
Off by default: without either option the checks marked `burn_in` are deselected.
Light on import: nothing here imports torch.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rigcheck.burnin.limits import Limits, parse_duration
from rigcheck.burnin.trace import FILE_NAME, BurnInError, load_trace, save_trace
from rigcheck.measure import machine_lock
from rigcheck.progress import Phase, phase, tell

MARKER = "burn_in"
STARTUP_S = 90.0  # beyond the duration: the child's torch import, CUDA start, a hung GPU's grace
TIMING = pytest.StashKey[dict]()
GIVEN_TRACE = pytest.StashKey[dict]()  # --burn-in-trace's trace, read once at configure time
# (backend, vendor) the recorder can load and read: CUDA torch + NVML, ROCm torch + amdsmi, psutil
SUPPORTED = {("cuda", "nvidia"), ("rocm", "amd"), ("cpu", "none")}


def _duration(text: str) -> float:
    import argparse

    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rigcheck", "rigcheck: machine conformance")
    group.addoption(
        "--burn-in",
        metavar="DUR",
        type=_duration,
        help="load every device at once for DUR (20s, 60s, 5m, 1h) and judge clocks, "
        "temperature, power, errors, correctness and throughput under load (off by default)",
    )
    group.addoption(
        "--burn-in-trace",
        metavar="FILE",
        help="judge a saved burn-in trace (burnin-trace.json in a run's report folder) instead "
        "of loading this machine",
    )


@pytest.hookimpl(tryfirst=True)  # before rigcheck.plugin checks -m's words against the markers
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}: burn-in checks, judged on a trace (--burn-in=DUR or --burn-in-trace)"
    )
    path = config.getoption("--burn-in-trace")
    if path and not Path(path).is_file():
        raise pytest.UsageError(f"--burn-in-trace={path}: no such file")
    if config.getoption("--burn-in") and path:
        raise pytest.UsageError("--burn-in and --burn-in-trace: load this machine, or judge a file")
    if path:  # a file that is no trace is a usage error, said before anything is judged
        try:
            config.stash[GIVEN_TRACE] = load_trace(path)
        except BurnInError as exc:
            raise pytest.UsageError(f"--burn-in-trace: {exc}") from None
    config.stash[TIMING] = {}


def enabled(config: pytest.Config) -> bool:
    return bool(config.getoption("--burn-in") or config.getoption("--burn-in-trace"))


@pytest.hookimpl(trylast=True)  # after the perf plugin orders its checks: the burn-in goes last
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    burn = [i for i in items if i.get_closest_marker(MARKER)]
    if not burn:
        return
    rest = [i for i in items if not i.get_closest_marker(MARKER)]
    if enabled(config):
        items[:] = rest + burn  # under load last: a bandwidth test after a burn reads low
        return
    if not rest:
        raise pytest.UsageError(
            "only burn-in checks are selected, and the burn-in is off: add --burn-in=60s "
            "(load this machine) or --burn-in-trace=FILE (judge a recorded trace)"
        )
    config.hook.pytest_deselected(items=burn)
    items[:] = rest


@pytest.fixture(scope="session")
def burn_in_limits(spec) -> Limits:
    try:
        return Limits(spec)
    except BurnInError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def burn_in_trace(request, spec, burn_in_limits, tmp_path_factory) -> dict[str, Any]:
    """This session's trace: recorded live once, or read from --burn-in-trace."""
    config = request.config
    run_dir = _report_dir(config) or tmp_path_factory.mktemp("burnin")
    given = config.getoption("--burn-in-trace")
    try:
        if given:
            trace = config.stash[GIVEN_TRACE]  # read and checked at configure time
        else:
            trace = _record(config, spec, burn_in_limits, run_dir / FILE_NAME)
    except BurnInError as exc:
        pytest.fail(str(exc), pytrace=False)
    if given:
        save_trace(run_dir / FILE_NAME, trace)  # the report plots the trace it judged
    if trace["class"] != spec.name:
        pytest.fail(
            f"the trace was recorded for {trace['class']!r}, this run checks {spec.name!r}: "
            f"judge it with -m {trace['class']}",
            pytrace=False,
        )
    return trace


def _record(config: pytest.Config, spec, limits: Limits, out: Path) -> dict[str, Any]:
    if config.getoption("--facts"):
        pytest.skip(
            "facts are replayed from a file: a live burn-in would load this machine, not the "
            "recorded one. Pass --burn-in-trace=FILE to judge a recorded burn-in"
        )
    if (spec.backend, spec.vendor) not in SUPPORTED:
        raise BurnInError(
            f"{spec.name} ({spec.title}): the burn-in load and telemetry exist for NVIDIA GPUs, "
            f"AMD GPUs (ROCm) and CPU hosts; {spec.vendor} {spec.backend} devices are not "
            "supported yet"
        )
    duration = config.getoption("--burn-in")
    command = [
        sys.executable,
        "-m",
        "rigcheck.burnin.record",
        f"--class={spec.name}",
        f"--backend={spec.backend}",
        f"--precision={limits.precision}",
        f"--duration={duration:g}",
        f"--out={out}",
        f"--memory-fraction={limits.limit('memory_test_fraction') or 0.9:g}",
    ] + (
        [f"--memory-max-gib={limits.limit('memory_test_max_gib'):g}"]
        if limits.limit("memory_test_max_gib")
        else []
    )
    machine_lock.take(lambda line: tell(config, line))  # no other rigcheck measures meanwhile
    started = time.monotonic()
    try:
        title = f"burn-in: every device under load for {duration:g} s"
        with phase(config, title, duration) as shown:
            done = _run_child(command, duration + STARTUP_S, shown)
    except subprocess.TimeoutExpired:
        raise BurnInError(
            f"the burn-in did not finish in {duration + STARTUP_S:.0f} s: a hung kernel or a "
            "GPU that stopped answering; check `nvidia-smi` (`amd-smi` on AMD GPUs) and the "
            "kernel log"
        ) from None
    config.stash[TIMING].update(
        duration_s=duration, started=started, recorded_s=time.monotonic() - started
    )
    if done.returncode != 0 or not out.is_file():
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise BurnInError(f"the burn-in load failed (exit {done.returncode}): {' | '.join(tail)}")
    return load_trace(out)


def _run_child(command: list[str], timeout: float, shown: Phase) -> subprocess.CompletedProcess:
    """subprocess.run, redrawing the progress twice a second while the load runs."""
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout
    while True:
        try:  # retrying communicate() after its timeout loses no output (subprocess docs)
            out, err = child.communicate(timeout=min(0.5, max(deadline - time.monotonic(), 0)))
            return subprocess.CompletedProcess(command, child.returncode, out, err)
        except subprocess.TimeoutExpired:
            if time.monotonic() >= deadline:
                child.kill()
                child.communicate()
                raise
            shown.advance()


def _report_dir(config: pytest.Config) -> Path | None:
    reports = config.pluginmanager.get_plugin("rigcheck-reports-session")
    run_dir = getattr(reports, "run_dir", None)
    return Path(run_dir) if run_dir is not None else None


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "teardown" and MARKER in report.keywords:
        _LAST_VERDICT[0] = time.monotonic()


_LAST_VERDICT = [0.0]


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Time to verdict: the configured duration, the recording, and the judging after it."""
    timing = config.stash.get(TIMING, {})
    if "started" not in timing:
        return
    total = _LAST_VERDICT[0] - timing["started"]
    terminalreporter.write_line(
        f"rigcheck burn-in: {timing['duration_s']:g} s of load, trace recorded in "
        f"{timing['recorded_s']:.1f} s, all burn-in verdicts {total:.1f} s after the load began"
    )
