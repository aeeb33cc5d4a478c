"""A tier's deadline: a check still running when the budget ends is stopped, and the run ends
INCOMPLETE with the reason, never a pass.

The stop is pytest.exit() raised from a SIGALRM handler while a check's own code runs (its
setup, call or teardown): pytest lets Exit through a check (a plain exception would make the
check FAIL, which would blame the machine for the clock), ends the session, and rigcheck's
reports mark the certificate partial with this reason. The alarm is armed only around a check's
phases, never while the reports are written, so a certificate is never cut in half. Where no
SIGALRM exists (Windows) or outside the main thread, the deadline is checked before each phase
only: a phase that hangs then runs to its own timeout (docs/gate.md says so).
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable

import pytest


class Deadline:
    """A budget in seconds for a tier's checks, counted from when the first check starts
    (`start()`, at pytest's run-test loop). The interpreter's start, the imports and the
    collection are outside it: on a loaded host (load 11 on 2 cores) they alone took the quick
    tier's 10 s, and every run ended INCOMPLETE before its first check (issue 38). The gate's
    --timeout still bounds the whole command."""

    def __init__(self, budget_s: float, label: str, clock: Callable[[], float] = time.monotonic):
        self.budget_s = budget_s
        self.label = label
        self.clock = clock
        self.ends_at = clock() + budget_s
        self._previous = signal.SIG_DFL

    def start(self) -> None:
        """The budget counts from now: the tier's first check is about to start."""
        self.ends_at = self.clock() + self.budget_s

    def remaining_s(self) -> float:
        return self.ends_at - self.clock()

    def reason(self) -> str:
        return f"{self.label}: its {self.budget_s:g} s time budget ran out"

    def stop(self) -> None:
        """End the run now (the reports say it is incomplete, and why)."""
        pytest.exit(self.reason(), returncode=pytest.ExitCode.INTERRUPTED)

    def arm(self) -> None:
        """Before a check's phase: stop now if the time is up, else set the alarm."""
        left = self.remaining_s()
        if left <= 0:
            self.stop()
        if can_alarm():
            self._previous = signal.signal(signal.SIGALRM, self._ring)
            signal.setitimer(signal.ITIMER_REAL, left)

    def disarm(self) -> None:
        """After the phase: no alarm left pending, and SIGALRM's handler as it was."""
        if can_alarm():
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self._previous)

    def _ring(self, signum, frame) -> None:
        self.stop()


def can_alarm() -> bool:
    return hasattr(signal, "SIGALRM") and threading.current_thread() is threading.main_thread()
