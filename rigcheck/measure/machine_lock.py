"""One rigcheck measuring at a time on a machine, whatever folder each run is in (issue 38).

Two runs in two folders (two clones, two --report-dir) each timed the other's load: on this
project's 2-core VM two `rigcheck check cpu -k "matmul and fp32"` started together measured
0.005 and 0.007 TFLOP/s where one alone measures 0.024, and neither said why. The per-folder
run lock (rigcheck.reports.run_lock) cannot see a run in another folder; this one is
machine-wide: an flock on one file in the system's temp folder, taken at a run's first live
measurement and held until the run ends, so a second run's measurements wait, saying who holds
it. The kernel releases an flock however its holder ends (a crash, kill -9): no stale lock.

Containers with their own /tmp do not see each other's lock: point RIGCHECK_MEASURE_LOCK at one
file on a folder they share.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import getpass
import os
import shlex
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ENV = "RIGCHECK_MEASURE_LOCK"  # the lock file, when the temp folder is not shared
NAME = "rigcheck-measure.lock"

_held: int | None = None  # this process's descriptor on the lock, while it holds it


def lock_path() -> Path:
    given = os.environ.get(ENV, "").strip()
    return Path(given) if given else Path(tempfile.gettempdir()) / NAME


def take(say: Callable[[str], None]) -> None:
    """Hold the machine's measurement lock until release(), waiting (and saying who holds it)
    while another process has it. Taking it again in the same process costs nothing."""
    global _held
    if _held is not None:
        return
    path = lock_path()
    fd = _open(path, say)
    if fd is None:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        say(
            f"rigcheck: another rigcheck is measuring on this machine ({holder(fd)}; lock "
            f"{path}): this run's measurements wait for it to end, so that neither measures "
            "the other's load (Ctrl-C stops waiting)"
        )
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
    _held = fd
    _write_holder(fd)


def release() -> None:
    """Let another run measure (closing the descriptor releases the flock)."""
    global _held
    if _held is not None:
        os.close(_held)
        _held = None


def holder(fd: int) -> str:
    """Who holds the lock, as its holder wrote it; a holder that is gone is not named."""
    os.lseek(fd, 0, os.SEEK_SET)
    text = os.read(fd, 4096).decode("utf-8", "replace").strip()
    pid = text.split()[1] if text.startswith("pid ") and len(text.split()) > 1 else ""
    if pid.isdigit() and _alive(int(pid)):
        return text
    return "a process that has not yet said which"


def _open(path: Path, say: Callable[[str], None]) -> int | None:
    """The lock file, shared by every user: created readable and writable by all. A file
    another user made in a sticky /tmp can be locked read-only (fs.protected_regular)."""
    for flags in (os.O_RDWR, os.O_RDWR | os.O_CREAT, os.O_RDONLY):
        try:
            fd = os.open(path, flags, 0o666)
        except (FileNotFoundError, PermissionError):
            continue
        except OSError as exc:
            say(f"rigcheck: WARNING: cannot open the measurement lock {path} ({exc}): {_UNSEEN}")
            return None
        if flags & os.O_CREAT:
            with contextlib.suppress(OSError):
                os.fchmod(fd, 0o666)  # the umask took write from the other users
        return fd
    say(f"rigcheck: WARNING: cannot open the measurement lock {path}: {_UNSEEN}")
    return None


_UNSEEN = (
    "another rigcheck measuring at the same time would go unseen. Set RIGCHECK_MEASURE_LOCK "
    "to a file every run can write"
)


def _write_holder(fd: int) -> None:
    text = f"pid {os.getpid()} ({_user()}), `{_command()}`{_where()}, since {_now():%H:%M:%SZ}\n"
    try:
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, text.encode())
    except OSError:
        pass  # a read-only descriptor still locks; it only cannot say who holds it


def _command() -> str:
    """This process's command line, short: `python -m pytest` for a module's __main__.py."""
    if not sys.argv or not sys.argv[0]:
        return "python"
    first = Path(sys.argv[0])
    name = f"python -m {first.parent.name}" if first.name == "__main__.py" else first.name
    line = " ".join([name, shlex.join(sys.argv[1:])]).rstrip()
    return line if len(line) <= 160 else line[:157] + "..."


def _where() -> str:
    try:
        return f" in {os.getcwd()}"
    except OSError:  # the folder was removed under the run
        return ""


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return f"uid {os.getuid()}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True
