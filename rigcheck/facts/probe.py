"""The contract every probe keeps: return a value or an error record, never raise."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence
from typing import Any

ERROR_KEY = "error"


def error_record(reason: str) -> dict[str, str]:
    """What a fact that could not be read is stored as, in place of its value."""
    return {ERROR_KEY: reason}


def is_error(value: Any) -> bool:
    """True when a stored fact is an error record rather than a value."""
    return isinstance(value, dict) and set(value) == {ERROR_KEY}


def guarded(read: Callable[[], Any]) -> Any:
    """Run one probe; any exception becomes an error record naming its type."""
    try:
        return read()
    except Exception as exc:  # a probe must never crash the session
        return error_record(f"{type(exc).__name__}: {exc}".strip())


class CommandRunner:
    """Runs external commands as argument lists with a timeout; the seam tests replace."""

    def __init__(self, timeout_s: float = 20.0):
        self.timeout_s = timeout_s

    def __call__(self, argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(argv),
            capture_output=True,
            text=True,
            timeout=self.timeout_s,
            check=False,
        )
