"""How a run ends: SIGTERM like Ctrl-C, no second traceback, regressions in the verdict, and a
report folder that is checked before anything runs.

Every way out gives the documented exit code (docs/exit-codes.md) and a full report set.
"""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import Any

import pytest

from rigcheck.paths import folder_problem
from rigcheck.reports.certificate import FILE_NAME


class Terminated(KeyboardInterrupt):
    """SIGTERM (a batch scheduler's stop, `kill`): ended like Ctrl-C, exit 2, reports written."""


class Interrupts:
    """The first Ctrl-C (SIGINT) or SIGTERM stops the run as KeyboardInterrupt / Terminated;
    every later one is ignored, so it cannot cut the reports, pytest's summary or its cleanup
    short and end in a raw traceback (exit 130). kill -9 still forces.

    Installed for the session only where Python's own handlers are in place (main thread), and
    put back at the end unless the run was interrupted (then the process is about to exit)."""

    def __init__(self) -> None:
        self.previous: dict[int, Any] = {}
        self.fired = False

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        mine = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}
        for sig, python_default in mine.items():
            if signal.getsignal(sig) is python_default:
                self.previous[sig] = signal.signal(sig, self._stop)

    def _stop(self, signum: int, frame: Any) -> None:
        for sig in self.previous:
            signal.signal(sig, signal.SIG_IGN)
        self.fired = True  # rigcheck.plugin.session says so once pytest has the interrupt
        if signum == signal.SIGTERM:
            raise Terminated("terminated (SIGTERM)")
        raise KeyboardInterrupt

    def uninstall(self) -> None:
        if not self.fired:
            for sig, handler in self.previous.items():
                signal.signal(sig, handler)
        self.previous = {}


def interrupt_reason(excinfo: pytest.ExceptionInfo) -> str:
    if excinfo.type is Terminated:
        return "terminated (SIGTERM)"
    if issubclass(excinfo.type, KeyboardInterrupt):
        return "interrupted (Ctrl-C / SIGINT)"
    return f"stopped: {excinfo.value}"  # pytest's own stop: collection errors, pytest.exit()


def take_regressions(config: pytest.Config) -> list[dict[str, str]]:
    """--benchmark-compare-fail's findings, taken from pytest-benchmark so that they end in the
    verdict ("regressed", exit 1) instead of its PerformanceRegression traceback."""
    bench = getattr(config, "_benchmarksession", None)
    if bench is None or not getattr(bench, "compare_fail", None):
        return []
    found = [
        {"benchmark": str(name), "reason": str(fail)}
        for name, fail in getattr(bench, "performance_regressions", [])
    ]
    bench.performance_regressions = []
    if not bench.compared_mapping:  # nothing stored to compare with: say so, do not raise
        bench.compare_fail = []
        bench.logger.warning(
            "rigcheck: --benchmark-compare-fail had no earlier run to compare with "
            "(the first run of a class only stores its figures)"
        )
    return found


def report_dir_problem(path: str) -> str | None:
    """Why --report-dir PATH cannot take this run's reports, or None. Nothing is created here."""
    problem = folder_problem(path, "--report-dir")
    if problem:
        return problem
    if (Path(path).expanduser() / FILE_NAME).exists():
        return (
            f"--report-dir {path}: already holds a run ({FILE_NAME}); rigcheck never overwrites "
            "one. Name a new folder, or leave --report-dir out for reports/<time>-<host>/"
        )
    return None


def claim(run_dir: Path) -> None:
    """Take the folder for this run: its certificate is made exclusively, so a second run
    started with the same --report-dir at the same time stops instead of mixing reports."""
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        with open(run_dir / FILE_NAME, "x", encoding="utf-8"):
            pass
    except FileExistsError:
        raise pytest.UsageError(report_dir_problem(str(run_dir)) or str(run_dir)) from None
    except OSError as exc:
        raise pytest.UsageError(f"--report-dir {run_dir}: {exc.strerror}") from None
