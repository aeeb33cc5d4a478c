"""`rigcheck slurm health|prolog|epilog`: the quick tier as Slurm's HealthCheckProgram or
Prolog, and the Epilog's check of what a job left, each draining the node with rigcheck's
root-cause line and resuming it only from rigcheck's own drain. docs/slurm/README.md."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

from rigcheck.errors import RigcheckError
from rigcheck.gate.quick_run import DEFAULT_TIMEOUT_S, FACTS_ENV, new_run_dir, run_quick_tier
from rigcheck.gate.slurm import DRAIN, NOTHING, Action, Scontrol, SlurmError, decide
from rigcheck.gate.tiers import seconds
from rigcheck.paths import folder_problem

DEFAULT_ROOT = "/var/lib/rigcheck"
ROOT_ENV = "RIGCHECK_GATE_DIR"


def add_parser(subparsers: Any) -> None:
    slurm = subparsers.add_parser("slurm", help="Slurm health check, prolog and epilog")
    modes = slurm.add_subparsers(
        dest="mode", required=True, metavar="MODE", parser_class=_GateParser
    )
    for mode, text in (
        ("health", "HealthCheckProgram: the quick tier; drain on failure, resume rigcheck's drain"),
        ("prolog", "Prolog: as health, and keep the facts the epilog compares with"),
        ("epilog", "Epilog: drain when the job left Xid, ECC errors, slowdowns or GPU processes"),
    ):
        parser = modes.add_parser(mode, help=text, description=text)
        _common(parser)
        if mode == "epilog":
            parser.add_argument("--timeout", type=seconds, default=DEFAULT_TIMEOUT_S, metavar="S",
                                help="kill the reading of the facts after S s and drain (a "
                                f"hung driver call; default {DEFAULT_TIMEOUT_S:g})")  # fmt: skip
        else:
            parser.add_argument("device_class", nargs="?", metavar="CLASS",
                                help="the node's class (default: detected)")  # fmt: skip
            parser.add_argument("--timeout", type=seconds, default=DEFAULT_TIMEOUT_S, metavar="S",
                                help=f"kill the quick tier after S s (default {DEFAULT_TIMEOUT_S:g}"
                                "; Slurm stops a HealthCheckProgram at 60)")  # fmt: skip
            parser.add_argument("--tier-budget", type=seconds, metavar="S", help="the quick "
                                "tier's budget instead of 10 s (a slower node)")  # fmt: skip
        parser.set_defaults(func=MODES[mode])


class _GateParser(argparse.ArgumentParser):
    """A mode's parser. A usage error (a typo in rigcheck.env's RIGCHECK_TIER_BUDGET or
    RIGCHECK_CLASS reaches the command line) gives no verdict: it is logged loudly where the
    gate's lines go, and the Prolog and Epilog exit 0, since slurmd drains a node whose Prolog
    or Epilog exits non-zero and a typo must not drain the cluster (docs/slurm). health exits 2
    (slurmd does not act on the HealthCheckProgram's code)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        mode = self.prog.rsplit(" ", 1)[-1]
        text = (f"USAGE ERROR, no verdict, node state not changed: {message}. Fix the "
                "settings in rigcheck.env (docs/slurm/README.md)")  # fmt: skip
        node = os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]
        try:
            _log(Path(os.environ.get(ROOT_ENV) or DEFAULT_ROOT), mode, node, text)
        except OSError:  # no gate folder to log in: slurmd's log still has the line
            print(f"rigcheck slurm {mode}: node {node}: {text}", file=sys.stderr)
        self.exit(0 if mode in ("prolog", "epilog") else 2)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--node", help="the Slurm node name (default: $SLURMD_NODENAME, else "
                        "this host's short name)")  # fmt: skip
    parser.add_argument("--dir", type=Path, default=None, help="reports, job baselines and the "
                        f"log go here (default ${ROOT_ENV}, else {DEFAULT_ROOT})")  # fmt: skip
    parser.add_argument("--facts", help=f"judge a recorded snapshot, not this machine (also "
                        f"${FACTS_ENV}; for replays and tests)")  # fmt: skip
    parser.add_argument("--dry-run", action="store_true",
                        help="say what would be done; change no node state")  # fmt: skip


def run_health(args: argparse.Namespace) -> int:
    return _health(args, keep_baseline=False)


def run_prolog(args: argparse.Namespace) -> int:
    return _health(args, keep_baseline=True)


def _health(args: argparse.Namespace, keep_baseline: bool) -> int:
    root, node = _root(args), _node(args)
    shared = _shared_with(node) if keep_baseline else None
    run = run_quick_tier(new_run_dir(root / "runs", args.mode), args.device_class, args.facts,
                         args.timeout, busy=shared is not None,
                         budget_s=args.tier_budget)  # fmt: skip
    if run.problem is not None:  # no verdict: a setup problem, not the node's; change nothing
        _log(root, args.mode, node, f"no verdict, node state not changed: {run.problem}")
        # Slurm drains a node whose Prolog exits non-zero ("Prolog error", which rigcheck never
        # resumes): a prolog without a verdict exits 0, or a typo would drain every node.
        return 0 if keep_baseline else 2
    if keep_baseline and run.root_cause is None:
        _save_baseline(root, args.mode, node, run.certificate["machine"])
    verdict = run.certificate["verdict"] if run.certificate else "incomplete"
    said = f"verdict {verdict}" + ("" if shared is None else f" ({shared})")
    try:  # a busy run judged less: its pass never resumes a drain
        action = _act(Scontrol(), node, run.root_cause, args.dry_run, resume=shared is None)
    except SlurmError as exc:
        return _slurm_failed(root, args.mode, node, said, run.root_cause, exc)
    _log(root, args.mode, node, f"{said}: {action.why} ({run.run_dir})", args.dry_run)
    return 0 if run.root_cause is None else 1


def run_epilog(args: argparse.Namespace) -> int:
    from rigcheck.gate.epilog import (
        job_gpus,
        leftovers,
        process_scope,
        root_cause_line,
        unknown_gpus,
    )

    root, node, scontrol = _root(args), _node(args), Scontrol()
    baseline, before, compared = _read_baseline(root, node)
    gpus = job_gpus(os.environ)
    after, unread = _facts_now(args)
    named_wrong = unknown_gpus(gpus, after, os.environ) if after else None
    if named_wrong:  # the job's GPUs are unknown: judged as if Slurm had named none
        gpus = None
    scope = process_scope(gpus, None if gpus else _other_jobs(scontrol, node))
    found = [unread] if unread else leftovers(before, after, scope)
    cause = root_cause_line(found)
    if baseline and baseline.is_file():
        baseline.unlink()
    said = f"{len(found)} finding(s), {compared}; {scope.why}"
    said += f"; ERROR: {named_wrong}" if named_wrong else ""
    try:
        action = _act(scontrol, node, cause, args.dry_run, resume=False)
    except SlurmError as exc:
        return _slurm_failed(root, "epilog", node, said, cause, exc)
    _log(root, "epilog", node, f"{said}: {action.why}", args.dry_run)
    return 0  # a failing epilog would make Slurm drain the node again, over rigcheck's reason


def _slurm_failed(
    root: Path, mode: str, node: str, said: str, cause: str | None, exc: SlurmError
) -> int:
    """sinfo, squeue or scontrol failed. A node that passed stays as it is and the script exits
    0: a non-zero Prolog or Epilog makes slurmd drain the node ("Prolog error", "Epilog error"),
    which rigcheck never resumes, for a fault that is not the node's. A node that failed exits
    1, so slurmd drains it with that reason: fail closed, and the log names the root cause."""
    if cause is None:
        _log(root, mode, node, f"{said}: node state not read or changed ({exc})")
        return 0
    _log(root, mode, node, f"{said}: could not drain for `{cause}` ({exc}); exit 1: slurmd "
         f"drains the node itself, a reason rigcheck never resumes (docs/slurm)")  # fmt: skip
    return 1


def _shared_with(node: str) -> str | None:
    """Why the prolog's quick tier runs as --busy-node (other jobs' processes, memory and heat
    on the node's GPUs are theirs, not a fault; no kernel on GPUs they own), or None when this
    job is alone on the node."""
    others = _other_jobs(Scontrol(), node)
    if others == []:
        return None
    whose = "squeue could not say" if others is None else f"job(s) {', '.join(others)} also here"
    return f"busy node, {whose}: idle-only checks and kernels not judged"


def _other_jobs(scontrol: Scontrol, node: str) -> list[str] | None:
    try:
        return scontrol.other_jobs(node, os.environ.get("SLURM_JOB_ID"))
    except SlurmError:
        return None


def _act(scontrol: Scontrol, node: str, cause: str | None, dry_run: bool, resume: bool) -> Action:
    if cause is None and not resume:  # the epilog drains; it never resumes: nothing to ask
        return Action(NOTHING, None, "nothing to do")
    action = decide(scontrol.node(node), cause)
    if action.kind != DRAIN and not resume:
        action = Action(NOTHING, None, action.why)
    if not dry_run:
        scontrol.apply(node, action)
    return action


def _facts_now(args: argparse.Namespace) -> tuple[dict[str, Any] | None, Any]:
    """(facts, None), or (None, the finding that they could not be read in time)."""
    path = args.facts or os.environ.get(FACTS_ENV)
    if path:
        from rigcheck.facts import load_facts

        return load_facts(path).data, None
    from rigcheck.gate.epilog_facts import facts_in_child

    return facts_in_child(args.timeout)


class BaselineError(Exception):
    """The job's baseline cannot be named or read; the epilog then judges no deltas."""


def _baseline_path(root: Path) -> Path | None:
    """<dir>/jobs/<SLURM_JOB_ID>.facts.json; None outside a job. A job id is digits (Slurm's
    job ids, array tasks included, are integers): anything else could name a path outside
    --dir (SLURM_JOB_ID=../../x), so it is refused."""
    job = os.environ.get("SLURM_JOB_ID")
    if not job:
        return None
    if not (job.isascii() and job.isdigit()):
        raise BaselineError(f"SLURM_JOB_ID={job!r} is not a Slurm job id (digits only)")
    return root / "jobs" / f"{job}.facts.json"


def _save_baseline(root: Path, mode: str, node: str, machine: dict[str, Any]) -> None:
    try:
        path = _baseline_path(root)
    except BaselineError as exc:
        _log(root, mode, node, f"ERROR: {exc}: no baseline kept, the epilog judges no deltas")
        return
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(machine), encoding="utf-8")


def _read_baseline(root: Path, node: str) -> tuple[Path | None, dict[str, Any] | None, str]:
    """(its path, the prolog's facts or None, how the epilog compares): a baseline that is not
    there, cut short (a full disk, a killed prolog) or not one is said in the log, and the
    deltas are not judged, as without a prolog."""
    try:
        path = _baseline_path(root)
    except BaselineError as exc:
        return None, None, f"ERROR: {exc}: deltas not judged"
    if path is None or not path.is_file():
        return path, None, "no prolog facts: deltas not judged"
    try:
        before = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        why = f"{type(exc).__name__}: {exc}"
        return (
            path,
            None,
            f"ERROR: the prolog's facts {path} cannot be read ({why}): deltas not judged",
        )
    if not isinstance(before, dict):
        return (
            path,
            None,
            f"ERROR: the prolog's facts {path} are not a facts object: deltas not judged",
        )
    return path, before, "against the prolog's facts"


def _root(args: argparse.Namespace) -> Path:
    root = args.dir or Path(os.environ.get(ROOT_ENV) or DEFAULT_ROOT)
    option = "--dir" if args.dir else f"${ROOT_ENV}"
    problem = folder_problem(root, option)  # a file or a device: said, not "File exists"
    if not problem:
        try:
            root.mkdir(parents=True, exist_ok=True)
            return root
        except OSError as exc:  # a full disk, a folder removed under it
            problem = f"{option} {root}: {exc.strerror}; name a writable folder"
    if args.mode in ("prolog", "epilog"):  # slurmd would drain for the gate's own typo
        print(f"rigcheck slurm {args.mode}: node {_node(args)}: SETTINGS ERROR, no verdict, "
              f"node state not changed: {problem} (RIGCHECK_GATE_DIR in rigcheck.env, "
              "docs/slurm/README.md)", file=sys.stderr)  # fmt: skip
        raise SystemExit(0)
    raise RigcheckError(problem)


def _node(args: argparse.Namespace) -> str:
    return args.node or os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]


def _log(root: Path, mode: str, node: str, text: str, dry_run: bool = False) -> None:
    """One line on stderr (slurmd's log) and in <dir>/gate.log: what was found and done."""
    stamp = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    line = f"rigcheck slurm {mode}: node {node}: {'[dry run] ' if dry_run else ''}{text}"
    print(line, file=sys.stderr)
    with open(root / "gate.log", "a", encoding="utf-8") as log:
        log.write(f"{stamp} {line}\n")


MODES = {"health": run_health, "prolog": run_prolog, "epilog": run_epilog}
