"""`rigcheck blame JOB_DIR`: the rank that slowed or hung a job, its node and device, and why.
Exit codes in docs/exit-codes.md; the job's records in docs/blame.md."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import socket
import sys
from pathlib import Path
from typing import Any

from rigcheck.blame.answer import Answer, judged, no_rank, no_suspect, not_examined
from rigcheck.blame.board_history import board_history
from rigcheck.blame.clock_share import clock_note
from rigcheck.blame.node_cause import node_causes
from rigcheck.blame.step_reader import JobRecordError
from rigcheck.blame.suspects import Suspect, evidence, find_suspect, read_job
from rigcheck.errors import RigcheckError
from rigcheck.gate.tiers import seconds
from rigcheck.paths import folder_problem

DEFAULT_TIMEOUT_S = 60.0


def add_parser(subparsers: Any) -> None:
    text = "name the rank, node, device and cause that slowed or hung a job"
    parser = subparsers.add_parser("blame", help=text, description=text)
    parser.add_argument(
        "job_dir",
        type=Path,
        metavar="JOB_DIR",
        help="the job's folder: steps/ and flight_recorder/ (docs/blame.md)",
    )
    parser.add_argument(
        "--node",
        help="this node's name (default: $SLURMD_NODENAME, else the "
        "short host name): the suspect's node is examined only here",
    )
    parser.add_argument(
        "--facts",
        help="the suspect node's facts now, recorded there (rigcheck "
        "facts -o), instead of reading this machine",
    )
    parser.add_argument(
        "--baseline",
        help="the node's facts at the job's start (default: JOB_DIR/facts/<node>.json when there)",
    )
    parser.add_argument(
        "--report-dir",
        type=Path,
        help="write certificate.json here (default: JOB_DIR/blame/<node>)",
    )
    parser.add_argument(
        "--history",
        metavar="URL",
        help="the history store to look the suspect GPU's board up in (default: "
        "$RIGCHECK_HISTORY, else rigcheck's data folder; none: do not look)",
    )
    parser.add_argument(
        "--timeout",
        type=seconds,
        default=DEFAULT_TIMEOUT_S,
        metavar="S",
        help=f"stop reading this machine's facts after S s (default {DEFAULT_TIMEOUT_S:g})",
    )
    parser.set_defaults(func=run_blame)


def run_blame(args: argparse.Namespace) -> int:
    started = dt.datetime.now(dt.timezone.utc)
    problem = args.report_dir and folder_problem(args.report_dir, "--report-dir")
    if problem:  # said before the job is read, not as "File exists" after it was judged
        raise RigcheckError(problem)
    job = read_job(args.job_dir)
    suspect = find_suspect(job)
    here = args.node or os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]
    if suspect is None:
        read = evidence(job)
        if not any(read.values()):
            raise JobRecordError(
                f"{args.job_dir}: nothing to judge: no step, dump, RAS answer on the job's "
                "communicator, Inspector collective or NVRx report could be read (empty or "
                "cut-short files?); save the records whole (docs/blame.md)"
            )
        return _say(no_suspect(str(args.job_dir), read))
    if not suspect.ranks:
        return _say(no_rank(suspect))
    if not args.facts and suspect.host != here:
        return _say(not_examined(suspect, here))
    after, unread = _facts_now(args)
    if after is None:
        raise RigcheckError(f"{here}: {unread}; rerun with a longer --timeout or drain by hand")
    before, compared = _baseline(args, job.folder, suspect)
    causes = node_causes(before, after, suspect.gpu, job.start)
    notes = [
        clock_note(before, after, suspect.gpu),
        board_history(args.history, after, suspect.gpu),
    ]
    answer = judged(suspect, causes, compared, "; ".join(n for n in notes if n))
    _certificate(args, suspect, answer, after, started)
    return _say(answer)


def _say(answer: Answer) -> int:
    print(f"rigcheck blame: {answer.line}")
    return answer.code


def _facts_now(args: argparse.Namespace) -> tuple[dict[str, Any] | None, str | None]:
    if args.facts:
        from rigcheck.facts import load_facts

        return load_facts(args.facts).data, None
    from rigcheck.gate.epilog_facts import facts_in_child

    facts, unread = facts_in_child(args.timeout)
    return facts, unread and unread.detail


def _baseline(args: argparse.Namespace, job_dir: Path, suspect: Suspect) -> tuple[Any, str]:
    """(the node's facts at the job's start or None, what the counters were compared with)."""
    path = Path(args.baseline) if args.baseline else job_dir / "facts" / f"{suspect.host}.json"
    if not path.is_file():
        if args.baseline:
            raise RigcheckError(
                f"--baseline {path}: no such file; record one at the job's start "
                "with `rigcheck facts -o`"
            )
        return None, "no facts from the job's start: counters not compared, kernel log since it"
    from rigcheck.facts import load_facts

    return load_facts(path).data, f"counters compared with {path}"


def _certificate(
    args: argparse.Namespace,
    suspect: Suspect,
    answer: Answer,
    machine: dict[str, Any],
    started: dt.datetime,
) -> None:
    from types import SimpleNamespace

    from rigcheck.facts import Facts
    from rigcheck.reports.certificate import build_certificate, write_certificate

    folder = args.report_dir or args.job_dir / "blame" / (suspect.host or "unknown")
    problem = folder_problem(folder, "--report-dir" if args.report_dir else "the job's folder")
    if problem:  # the default folder, under a job folder that may be read-only
        raise RigcheckError(f"{problem} (or give --report-dir)")
    folder.mkdir(parents=True, exist_ok=True)
    finished = dt.datetime.now(dt.timezone.utc)
    run = {
        "id": f"{started:%Y%m%dT%H%M%SZ}-{suspect.host}",
        "command_line": " ".join(["rigcheck", *sys.argv[1:]]),
        "args": sys.argv[1:],
        "cwd": os.getcwd(),
        "started_at": started.isoformat(timespec="seconds"),
        "finished_at": finished.isoformat(timespec="seconds"),
        "duration_s": round((finished - started).total_seconds(), 3),
        "report_dir": str(folder),
    }
    target = SimpleNamespace(facts=Facts(machine), spec=None, how="rigcheck blame: no class judged")
    certificate = build_certificate(
        run=run,
        target=target,
        checks=answer.checks,
        selected=[c["id"] for c in answer.checks],
        exit_status=answer.code,
        partial_reason=None,
    )
    write_certificate(folder / "certificate.json", certificate)
