"""The rigcheck command: detect, facts, and the subcommands other modules add (fit, ...)."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Any

from rigcheck import __version__
from rigcheck.errors import RigcheckError, blank_option, one_line_errors

# The subcommands other modules add through add_parser(subparsers), with their one-line help:
# `rigcheck --help` lists them without importing those modules (pytest, jsonschema, rich,
# SQLAlchemy: 0.4 s before, issue 43), and `rigcheck CMD` imports only CMD's module.
# tests/cli/test_lazy_help.py checks each line against the module's own.
COMMANDS = {
    "fit": ("rigcheck.memory.cli", "will a training or inference job fit in device memory, "
            "with how much headroom"),
    "diff": ("rigcheck.reports.cli", "compare two certificates: changed facts, moved figures, "
             "changed verdicts"),
    "report": ("rigcheck.reports.cli", "re-render report.html from a certificate"),
    "check": ("rigcheck.check", "check this machine against its class: pytest -m CLASS on the "
              "packaged suites"),
    "coverage": ("rigcheck.coverage_cli", "what a tier catches of the published causes of job "
                 "interruptions (llama 3's 419), and how often it fails a healthy node"),
    "fleet": ("rigcheck.fleet.cli", "judge many nodes' certificates together and name the nodes "
              "to drain"),
    "history": ("rigcheck.history.cli", "a node's or a GPU's runs from the history store: "
                "figures over time, changes"),
    "slurm": ("rigcheck.gate.slurm_cli", "Slurm health check, prolog and epilog"),
    "k8s": ("rigcheck.gate.k8s_cli", "Kubernetes: verdicts as node labels and a taint"),
    "keygen": ("rigcheck.attest.cli", "make an Ed25519 key pair to sign certificates"),
    "attest": ("rigcheck.attest.cli", "sign a finished run's certificate for a renter, bound to "
               "the node and their nonce"),
    "verify": ("rigcheck.attest.cli", "check a signed certificate: signature, nonce, facts; "
               "--spec re-judges it"),
    "blame": ("rigcheck.blame.cli", "name the rank, node, device and cause that slowed or hung "
              "a job"),
}  # fmt: skip
SUBCOMMAND_MODULES = list(dict.fromkeys(module for module, _ in COMMANDS.values()))
ALL = "all"  # build_parser(ALL): every subcommand's own parser (the tests' and the docs' view)


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["check"]:  # every argument after it is pytest's
        from rigcheck.check import run

        return run(argv[1:])
    if argv[:1] == ["coverage"]:  # the campaign's own options (python -m rigcheck.testing.coverage)
        from rigcheck.coverage_cli import run as run_campaign

        return run_campaign(argv[1:])
    # Only the named subcommand's module is imported (`rigcheck facts` is timed against torch's
    # collect_env, issue 12); no subcommand named, or --help: each one's help line only.
    parser = build_parser(
        argv[0] if argv[:1] and argv[0] in {"detect", "facts", *COMMANDS} else None
    )
    blank = argv[:1] != ["slurm"] and blank_option(parser, argv)  # slurm: the gate's own log
    if blank:
        print(blank, file=sys.stderr)
        return 2
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except RigcheckError as exc:
        print(f"rigcheck: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a path that passed the checks but still cannot be read or written
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"rigcheck: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("rigcheck: interrupted", file=sys.stderr)
        return 130


def build_parser(command: str | None = ALL) -> argparse.ArgumentParser:
    """The parser with `command`'s arguments (ALL: every command's); the other commands are
    listed by name and help line only."""
    parser = argparse.ArgumentParser(prog="rigcheck", description=__doc__)
    parser.add_argument("--version", action="version", version=f"rigcheck {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    if command in (ALL, "detect"):
        _add_detect(sub)
    else:
        sub.add_parser("detect", help=DETECT_HELP)
    if command in (ALL, "facts"):
        _add_facts(sub)
    else:
        sub.add_parser("facts", help=FACTS_HELP)
    chosen = [module for name, (module, _) in COMMANDS.items() if command in (ALL, name)]
    for module in dict.fromkeys(chosen):  # a module adds all its commands (report and diff)
        importlib.import_module(module).add_parser(sub)
    for name, (_, line) in COMMANDS.items():
        if name not in sub.choices:
            sub.add_parser(name, help=line)
    one_line_errors(parser)
    return parser


DETECT_HELP = "print this machine's device class and its marker"
FACTS_HELP = "write this machine's facts snapshot as JSON"


def _add_detect(sub: Any) -> None:
    detect = sub.add_parser("detect", help=DETECT_HELP)
    detect.add_argument("--facts", metavar="FILE", help="detect from a recorded snapshot")
    detect.set_defaults(func=run_detect)


def _add_facts(sub: Any) -> None:
    from rigcheck.facts.kernel_log.reader import WINDOW_ENV, xid_window_arg

    facts = sub.add_parser("facts", help=FACTS_HELP)
    facts.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    facts.add_argument(
        "--xid-window",
        metavar="DUR",
        type=xid_window_arg,
        help=f"only Xid events this recent, e.g. 2h, 30m (default: since boot, or ${WINDOW_ENV})",
    )
    facts.set_defaults(func=run_facts)


def run_detect(args: argparse.Namespace) -> int:
    from rigcheck.detect import detect_class
    from rigcheck.facts import collect_facts, load_facts
    from rigcheck.spec import load_all

    facts = load_facts(args.facts) if args.facts else collect_facts()
    name, how = detect_class(facts, load_all())
    if name is None:
        print(f"no class: {how}", file=sys.stderr)
        return 1
    print(name)
    print(f"  {how}", file=sys.stderr)
    print(f"  check it with: rigcheck check {name} (in a clone: pytest -m {name})", file=sys.stderr)
    return 0


def run_facts(args: argparse.Namespace) -> int:
    from rigcheck.detect import describe_devices
    from rigcheck.facts import collect_facts
    from rigcheck.facts.snapshot import SNAPSHOT_KEYS
    from rigcheck.paths import holds_another_kind, json_with, output_problem

    problem = args.output and (
        output_problem(args.output)
        or holds_another_kind(args.output, "-o", "facts snapshot", json_with(*SNAPSHOT_KEYS))
    )
    if problem:
        raise RigcheckError(problem)
    facts = collect_facts(xid_window_s=args.xid_window)
    if args.output:
        facts.data["origin"]["kind"] = "recorded"
        facts.save(args.output)
        print(f"wrote {args.output}: {describe_devices(facts)}", file=sys.stderr)
    else:
        sys.stdout.write(facts.to_json())
    return 0


if __name__ == "__main__":
    sys.exit(main())
