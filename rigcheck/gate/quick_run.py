"""One run of the quick tier in a child process, bounded by a hard timeout, read back as its
certificate: what the Slurm health check and the Kubernetes labeller act on."""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rigcheck.reports.certificate import CertificateError, load_certificate

# Slurm kills a HealthCheckProgram after 60 s; the quick tier's own budget is 10 s, and this
# leaves the rest for the interpreter, the facts and scontrol.
DEFAULT_TIMEOUT_S = 50.0
FACTS_ENV = "RIGCHECK_GATE_FACTS"  # a recorded snapshot to judge instead of this machine
# A health check every 5 minutes writes ~100 KB a run: keep the newest runs of each kind only.
KEEP_RUNS = 100
RUN_NAME = re.compile(r"^(?P<kind>[a-z0-9]+)-\d{8}T\d{6}-\d+$")


@dataclass(frozen=True)
class QuickRun:
    certificate: dict[str, Any] | None  # None: killed before it wrote one, or no verdict
    root_cause: str | None  # None: passed, or no verdict (see problem)
    problem: str | None  # why there is no verdict to act on
    run_dir: Path


def new_run_dir(root: Path, kind: str) -> Path:
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S")
    return root / f"{kind}-{stamp}-{os.getpid()}"


def prune_runs(root: Path, kind: str, keep: int = KEEP_RUNS) -> list[Path]:
    """Remove all but the newest `keep` run folders of this kind (named by new_run_dir, so
    their names sort by time); nothing else in the folder is touched. The removed ones."""
    if not root.is_dir():
        return []
    runs = sorted(
        p for p in root.iterdir()
        if p.is_dir() and (m := RUN_NAME.match(p.name)) and m["kind"] == kind
    )  # fmt: skip
    old = runs[: max(0, len(runs) - keep)]
    for path in old:
        shutil.rmtree(path, ignore_errors=True)
    return old


def quick_command(
    run_dir: Path, device_class: str | None, facts: str | None, busy: bool = False,
    budget_s: float | None = None,
) -> list[str]:  # fmt: skip
    command = [sys.executable, "-m", "rigcheck", "check", "--tier", "quick"]
    command += [device_class] if device_class else []
    command += [f"--report-dir={run_dir}", "-q"] + (["--busy-node"] if busy else [])
    command += [f"--tier-budget={budget_s:g}"] if budget_s is not None else []
    return command + ([f"--facts={facts}"] if facts else [])


def run_quick_tier(
    run_dir: Path, device_class: str | None, facts: str | None, timeout_s: float,
    busy: bool = False, budget_s: float | None = None,
) -> QuickRun:  # fmt: skip
    """busy: `--busy-node` (rigcheck/gate/busy.py), for a node whose GPUs run other work;
    budget_s: the tier's `--tier-budget` (None: its 10 s)."""
    facts = facts or os.environ.get(FACTS_ENV)
    command = quick_command(run_dir, device_class, facts, busy, budget_s)
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    killed = False
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
        output = done.stdout + done.stderr
    except subprocess.TimeoutExpired as exc:
        killed, output = True, _text(exc.stdout) + _text(exc.stderr)
    if run_dir.is_dir():
        (run_dir / "gate-output.txt").write_text(output, encoding="utf-8")
    named = RUN_NAME.match(run_dir.name)  # a folder from new_run_dir: prune its older kin
    if named:
        prune_runs(run_dir.parent, named["kind"])
    return read_back(run_dir, killed, timeout_s, output)


def read_back(run_dir: Path, killed: bool, timeout_s: float, output: str) -> QuickRun:
    """The verdict to act on. A killed run is incomplete unless it had already failed; killed
    before it wrote a certificate, too (a probe stuck inside the driver, as on a GPU fallen off
    the bus, is what the hard timeout is for: it must not leave the node in service)."""
    try:
        certificate = load_certificate(run_dir)
    except CertificateError as exc:
        if killed:
            cause = (
                f"incomplete: the quick tier did not end within {timeout_s:g} s and wrote no "
                "certificate (killed; a check stuck in the driver? run `rigcheck check --tier "
                "quick` by hand)"
            )
            return QuickRun(None, cause, None, run_dir)
        last = output.strip().splitlines()[-1:] or ["no output"]
        problem = f"no certificate ({exc}); the run said: {last[0]}"
        return QuickRun(None, None, problem, run_dir)
    cause = certificate.get("root_cause")
    if killed and certificate["verdict"] != "fail":
        cause = f"incomplete: the quick tier did not end within {timeout_s:g} s (killed)"
    return QuickRun(certificate, cause, None, run_dir)


def _text(data: bytes | str | None) -> str:
    if isinstance(data, bytes):
        return data.decode(errors="replace")
    return data or ""
