"""`rigcheck k8s mark`: the quick tier's verdict (or a finished run's certificate) as this
node's labels, annotations and NoSchedule taint. A dry run unless --apply. docs/k8s/README.md."""

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
from rigcheck.gate.k8s import NodeMarker, node_patch
from rigcheck.gate.quick_run import DEFAULT_TIMEOUT_S, new_run_dir, run_quick_tier
from rigcheck.gate.tiers import seconds, tier_of
from rigcheck.paths import folder_problem
from rigcheck.reports.certificate import load_certificate

NODE_ENV = "NODE_NAME"  # the DaemonSet sets it from the downward API (spec.nodeName)


def add_parser(subparsers: Any) -> None:
    k8s = subparsers.add_parser("k8s", help="Kubernetes: verdicts as node labels and a taint")
    modes = k8s.add_subparsers(dest="mode", required=True, metavar="MODE")
    mark = modes.add_parser(
        "mark",
        help="label and taint this node from the quick tier's verdict (dry run unless --apply)",
        description=__doc__,
    )
    mark.add_argument("device_class", nargs="?", metavar="CLASS", help="default: detected")
    mark.add_argument("--node", help=f"the Kubernetes node (default: ${NODE_ENV}, else hostname)")
    mark.add_argument("--certificate", metavar="PATH", help="mark from this finished run's "
                      "certificate (or run folder) instead of running the quick tier")  # fmt: skip
    mark.add_argument("--dir", type=Path, default=Path("reports"), help="where the quick tier's "
                      "reports go (default: ./reports)")  # fmt: skip
    mark.add_argument("--facts", help="judge a recorded snapshot, not this machine")
    mark.add_argument("--timeout", type=seconds, default=DEFAULT_TIMEOUT_S, metavar="S",
                      help=f"kill the quick tier after S s (default {DEFAULT_TIMEOUT_S:g}): "
                      "then incomplete, and the node tainted")  # fmt: skip
    mark.add_argument("--tier-budget", type=seconds, metavar="S",
                      help="the quick tier's budget instead of 10 s")  # fmt: skip
    mark.add_argument("--busy-node", action="store_true", help="the node runs other pods' work "
                      "(the DaemonSet): judge only what that cannot change (quick tier "
                      "--busy-node); a pass then never clears rigcheck's taint")  # fmt: skip
    how = mark.add_mutually_exclusive_group()
    how.add_argument("--apply", action="store_true", help="patch the node (default: the API "
                     "server checks the patch as a dry run and stores nothing)")  # fmt: skip
    how.add_argument(
        "--offline",
        action="store_true",
        help="only print the patch, no cluster (the node's other taints are unknown, so the "
        "list shows rigcheck's only)",
    )
    mark.set_defaults(func=run_mark)


def run_mark(args: argparse.Namespace) -> int:
    certificate = _certificate(args)
    verdict, cause = certificate["verdict"], certificate.get("root_cause")
    node = args.node or os.environ.get(NODE_ENV) or socket.gethostname().split(".")[0]
    marker = None if args.offline else NodeMarker()
    taints = [] if marker is None else marker.taints(node)
    busy = _busy(certificate)
    now = dt.datetime.now(dt.timezone.utc)
    body = node_patch(verdict, cause, _tier(certificate), taints, now, may_clear=not busy)
    print(json.dumps(body, indent=2))
    if marker is not None:
        marker.patch(node, body, dry_run=not args.apply)
    done = "patched" if args.apply else "dry run, nothing stored"
    done = "printed only (--offline)" if marker is None else done
    print(f"rigcheck k8s mark: node {node}: verdict {verdict}"
          f"{f': {cause}' if cause else ''} ({done})", file=sys.stderr)  # fmt: skip
    return 0 if cause is None else 1


def _certificate(args: argparse.Namespace) -> dict[str, Any]:
    if args.certificate:
        return load_certificate(args.certificate)
    # The busy DaemonSet and the idle CronJob share a folder: each keeps its own last runs.
    kind = "k8sbusy" if args.busy_node else "k8s"
    problem = folder_problem(args.dir, "--dir")  # a file or a device: said, not "File exists"
    if problem:
        raise RigcheckError(problem)
    try:
        run = run_quick_tier(new_run_dir(args.dir, kind), args.device_class, args.facts,
                             args.timeout, busy=args.busy_node,
                             budget_s=args.tier_budget)  # fmt: skip
    except OSError as exc:  # --dir is a file, or sits where nothing can be written
        raise RigcheckError(f"--dir {args.dir}: {exc.strerror}; name a writable folder") from None
    if run.certificate is None and run.root_cause is not None:  # killed before it wrote one
        named = ["--tier", "quick"] + (["--busy-node"] if args.busy_node else [])
        return {"verdict": "incomplete", "root_cause": run.root_cause, "run": {"args": named}}
    if run.certificate is None:
        raise RigcheckError(f"the quick tier gave no verdict, node not marked: {run.problem}")
    if run.root_cause != run.certificate.get("root_cause"):  # killed at the timeout
        return {**run.certificate, "verdict": "incomplete", "root_cause": run.root_cause}
    return run.certificate


BLAME_CHECK_ID = "rigcheck/blame::"  # not imported: blame reads the gate's facts_in_child


def _tier(certificate: dict[str, Any]) -> str:
    """The tier the run named (`quick-busy` with --busy-node), 'blame' for a `rigcheck blame`
    certificate (docs/k8s/rigcheck-blame-job.yaml), else 'full' (a whole class run)."""
    checks = certificate.get("checks") or []  # blame's ids: rigcheck.blame.answer.CHECK_ID
    if checks and all(str(c.get("id")).startswith(BLAME_CHECK_ID) for c in checks):
        return "blame"
    tier = tier_of(certificate) or "full"
    return f"{tier}-busy" if _busy(certificate) else tier


def _busy(certificate: dict[str, Any]) -> bool:
    """Whether the run judged a busy node (its idle-only checks and kernels NOT JUDGED)."""
    return "--busy-node" in ((certificate.get("run") or {}).get("args") or [])
