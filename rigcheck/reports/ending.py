"""How a run ends: SIGTERM like Ctrl-C, no second traceback, regressions in the verdict, and a
report folder that is checked before anything runs.

Every way out gives the documented exit code (docs/exit-codes.md) and a full report set.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from rigcheck.paths import cannot_write_in
from rigcheck.reports.certificate import FILE_NAME


class Terminated(KeyboardInterrupt):
    """SIGTERM (a batch scheduler's stop, `kill`): ended like Ctrl-C, exit 2, reports written."""


def handle_sigterm() -> None:
    """Turn SIGTERM into Terminated, unless someone else already handles it."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _raise_terminated)


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated("terminated (SIGTERM)")


def interrupt_reason(excinfo: pytest.ExceptionInfo) -> str:
    if excinfo.type is Terminated:
        return "terminated (SIGTERM)"
    if issubclass(excinfo.type, KeyboardInterrupt):
        return "interrupted (Ctrl-C / SIGINT)"
    return f"stopped: {excinfo.value}"  # pytest's own stop: collection errors, pytest.exit()


def finish_quietly() -> None:
    """After the first interrupt the reports are being written: a second Ctrl-C or SIGTERM
    would only cut them short and end in a raw traceback (exit 130), so both are ignored."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    sys.stderr.write(
        "\nrigcheck: stopping; writing the reports (another Ctrl-C is ignored, kill -9 forces)\n"
    )


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
    target = Path(path).expanduser()
    if target.exists() and not target.is_dir():
        return f"--report-dir {path}: is a file, not a folder. Name a folder (it is created)"
    if (target / FILE_NAME).exists():
        return (
            f"--report-dir {path}: already holds a run ({FILE_NAME}); rigcheck never overwrites "
            "one. Name a new folder, or leave --report-dir out for reports/<time>-<host>/"
        )
    existing = next((p for p in [target, *target.parents] if p.exists()), None)
    if existing is None or not existing.is_dir():
        return f"--report-dir {path}: {existing} is a file, so the folder cannot be made there"
    if cannot_write_in(existing):
        return f"--report-dir {path}: {existing} is not writable. Name a folder you can write"
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
