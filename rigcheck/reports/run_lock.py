"""One run at a time per report folder: a second run waits for the first (issue 24).

Two runs at once on one machine each measure the other's load (both passed with a third of
the usual figures). The lock is an flock on a file beside the run folders, so it is released
by the kernel however the holder ends (a crash, kill -9): there is no stale lock to clean up.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import os
from collections.abc import Callable
from pathlib import Path
from typing import IO

LOCK_NAME = ".rigcheck.lock"


def hold(folder: Path, say: Callable[[str], None]) -> IO[str]:
    """Take FOLDER's run lock, waiting (and saying so) while another run holds it. The lock
    lasts as long as the returned file is open."""
    handle = open(folder / LOCK_NAME, "a+", encoding="utf-8")  # noqa: SIM115 - held open
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        say(
            f"rigcheck: another run is under way in {folder} ({holder(handle)}): waiting for "
            "it to end, so that neither run measures the other's load (Ctrl-C stops waiting)"
        )
        fcntl.flock(handle, fcntl.LOCK_EX)
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()}, since {dt.datetime.now(dt.timezone.utc):%H:%M:%SZ}\n")
    handle.flush()
    return handle


def holder(handle: IO[str]) -> str:
    """Who holds the lock, as its holder wrote it."""
    handle.seek(0)
    return handle.read().strip() or "a process that has not said which"
