"""Reports that cannot be written (an unwritable folder, a full disk): one line, exit code 6.

Exit 1 means "the machine failed a check"; a report folder that cannot take the reports says
nothing about the machine, so it has a code of its own (docs/exit-codes.md). The run stops
there: figures nobody can read are not worth another hour of load.
"""

from __future__ import annotations

import errno
import os
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from rigcheck.errors import RigcheckError
from rigcheck.paths import cannot_write_in

REPORT_NOT_WRITTEN = 6
ELSEWHERE = "name a folder that can take them: --report-dir DIR, or RIGCHECK_REPORT_DIR=DIR"
FULL = (errno.ENOSPC, errno.EDQUOT)


class ReportWriteError(RigcheckError):
    """The reports cannot be written: where, and why."""

    def __init__(self, path: str | os.PathLike[str], reason: str, full: bool = False):
        super().__init__(f"{path}: {reason}")
        self.path = str(path)
        self.reason = reason
        self.full = full  # the disk (or the quota) is full

    def line(self) -> str:
        """The one line the run ends on."""
        fix = f"Free space there, or {ELSEWHERE}" if self.full else f"N{ELSEWHERE[1:]}"
        return f"rigcheck: the reports cannot be written: {self}. {fix}"


def from_os_error(exc: OSError, path: Path) -> ReportWriteError:
    """An OSError from writing PATH (a write's ENOSPC names no file), said plainly."""
    return ReportWriteError(exc.filename or path, exc.strerror or str(exc), exc.errno in FULL)


def root_problem(root: Path) -> ReportWriteError | None:
    """Why the folder holding the runs (RIGCHECK_REPORT_DIR, or ./reports) cannot take one.

    mkdir's own errors ("File exists" for /dev/null) would not say what is wrong.
    """
    if root.exists() and not root.is_dir():
        return ReportWriteError(root, "is a file, not a folder")
    existing = next((p for p in [root, *root.parents] if p.exists()), None)
    if existing is None or not existing.is_dir():
        return ReportWriteError(root, f"{existing} is a file, so the folder cannot be made")
    if cannot_write_in(existing):
        return ReportWriteError(root, f"{existing} is not writable (or a read-only file system)")
    return None


def remove_if_unreadable(path: Path) -> None:
    """junit.xml cut short by a full disk is no report: remove it rather than leave half."""
    try:
        ElementTree.parse(path)
    except FileNotFoundError:
        return
    except (ElementTree.ParseError, OSError):
        path.unlink(missing_ok=True)
