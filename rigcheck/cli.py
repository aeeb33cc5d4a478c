"""The rigcheck command: detect, facts, and the subcommands other modules add (fit, ...)."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from rigcheck import __version__
from rigcheck.detect import describe_devices, detect_class
from rigcheck.errors import RigcheckError, one_line_errors
from rigcheck.facts import collect_facts, load_facts
from rigcheck.facts.kernel_log.reader import WINDOW_ENV, xid_window_arg
from rigcheck.paths import output_problem
from rigcheck.spec import load_all

# Modules that add their own subcommands through add_parser(subparsers).
SUBCOMMAND_MODULES = [
    "rigcheck.memory.cli",
    "rigcheck.reports.cli",
    "rigcheck.check",
    "rigcheck.coverage_cli",
    "rigcheck.fleet.cli",
    "rigcheck.history.cli",
    "rigcheck.gate.slurm_cli",
    "rigcheck.gate.k8s_cli",
    "rigcheck.attest.cli",
    "rigcheck.blame.cli",
]


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["check"]:  # every argument after it is pytest's
        from rigcheck.check import run

        return run(argv[1:])
    if argv[:1] == ["coverage"]:  # the campaign's own options (python -m rigcheck.testing.coverage)
        from rigcheck.coverage_cli import run as run_campaign

        return run_campaign(argv[1:])
    # `rigcheck facts` is timed against torch's collect_env (issue 12): it skips importing the
    # other subcommands' modules (pytest, rich, the report writers) that it never runs.
    parser = build_parser(only_facts=argv[:1] == ["facts"])
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


def blank_option(parser: argparse.ArgumentParser, argv: list[str]) -> str | None:
    """'rigcheck fit: error: -o ...' when an option is given an empty value (`-o ""`,
    `--history=`), else None. Each such option read it as left out: `facts -o ''` printed the
    snapshot, `report -o ''` wrote beside the certificate, `--history ''` said history was
    switched off by $RIGCHECK_HISTORY."""
    command = _subcommand(parser, argv)
    valued = {o for a in command._actions if a.nargs != 0 for o in a.option_strings}
    for before, arg in zip(["", *argv], argv, strict=False):
        named = arg.split("=", 1)[0] if arg.startswith("--") and "=" in arg else None
        if (named and not arg.split("=", 1)[1].strip()) or (not arg.strip() and before in valued):
            option = named or before
            return (
                f"{command.prog}: error: {option} '': an empty value (an unset variable?); give "
                f"one, or leave {option} out (see {command.prog} --help)"
            )
    return None


def _subcommand(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.ArgumentParser:
    """The parser of the subcommand ARGV names, down to `k8s mark`; PARSER if none."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = next((a for a in argv if a in action.choices), None)
            if chosen is not None:
                rest = argv[argv.index(chosen) + 1 :]
                return _subcommand(action.choices[chosen], rest)
    return parser


def build_parser(only_facts: bool = False) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rigcheck", description=__doc__)
    parser.add_argument("--version", action="version", version=f"rigcheck {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    detect = sub.add_parser("detect", help="print this machine's device class and its marker")
    detect.add_argument("--facts", metavar="FILE", help="detect from a recorded snapshot")
    detect.set_defaults(func=run_detect)

    facts = sub.add_parser("facts", help="write this machine's facts snapshot as JSON")
    facts.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    facts.add_argument(
        "--xid-window",
        metavar="DUR",
        type=xid_window_arg,
        help=f"only Xid events this recent, e.g. 2h, 30m (default: since boot, or ${WINDOW_ENV})",
    )
    facts.set_defaults(func=run_facts)

    for name in [] if only_facts else SUBCOMMAND_MODULES:
        importlib.import_module(name).add_parser(sub)
    one_line_errors(parser)
    return parser


def run_detect(args: argparse.Namespace) -> int:
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
    problem = args.output and output_problem(args.output)
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
