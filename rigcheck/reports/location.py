"""Where a run's reports go: reports/<UTC time>-<short host name>/, or where the user says."""

from __future__ import annotations

import datetime as dt
import os
import re
import socket
from pathlib import Path

ROOT_ENV = "RIGCHECK_REPORT_DIR"  # replaces reports/ as the folder that holds the runs


def reports_root(rootpath: Path) -> Path:
    """The folder holding one sub-folder per run: $RIGCHECK_REPORT_DIR, else <rootdir>/reports."""
    given = os.environ.get(ROOT_ENV, "").strip()  # empty or blank: not set
    return Path(given) if given else rootpath / "reports"


def run_name(now: dt.datetime, host: str | None = None) -> str:
    """'20261122T021425Z-gpu-node-07': sorts by time, says which machine."""
    short = (host or socket.gethostname()).split(".")[0]
    short = re.sub(r"[^A-Za-z0-9_-]+", "-", short).strip("-") or "host"
    return f"{now.astimezone(dt.timezone.utc):%Y%m%dT%H%M%SZ}-{short}"


def make_run_dir(root: Path, name: str) -> Path:
    """Create a fresh run folder; a second run in the same second gets name-2, name-3, ..."""
    root.mkdir(parents=True, exist_ok=True)
    for n in range(1, 1000):
        path = root / (name if n == 1 else f"{name}-{n}")
        try:
            path.mkdir()
        except FileExistsError:
            continue
        return path
    raise FileExistsError(f"{root}: no free run folder name for {name}")
