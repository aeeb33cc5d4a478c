"""The rigcheck command: detect, facts, and the subcommands other modules add (fit, ...)."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from rigcheck import __version__
from rigcheck.detect import describe_devices, detect_class
from rigcheck.errors import RigcheckError
from rigcheck.facts import collect_facts, load_facts
from rigcheck.spec import load_all

# Modules that add their own subcommands through add_parser(subparsers).
SUBCOMMAND_MODULES = ["rigcheck.memory.cli", "rigcheck.reports.cli", "rigcheck.fleet.cli"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except RigcheckError as exc:
        print(f"rigcheck: {exc}", file=sys.stderr)
        return 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rigcheck", description=__doc__)
    parser.add_argument("--version", action="version", version=f"rigcheck {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    detect = sub.add_parser("detect", help="print this machine's device class and its marker")
    detect.add_argument("--facts", metavar="FILE", help="detect from a recorded snapshot")
    detect.set_defaults(func=run_detect)

    facts = sub.add_parser("facts", help="write this machine's facts snapshot as JSON")
    facts.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    facts.set_defaults(func=run_facts)

    for name in SUBCOMMAND_MODULES:
        importlib.import_module(name).add_parser(sub)
    return parser


def run_detect(args: argparse.Namespace) -> int:
    facts = load_facts(args.facts) if args.facts else collect_facts()
    name, how = detect_class(facts, load_all())
    if name is None:
        print(f"no class: {how}", file=sys.stderr)
        return 1
    print(name)
    print(f"  {how}", file=sys.stderr)
    print(f"  check it with: pytest -m {name}", file=sys.stderr)
    return 0


def run_facts(args: argparse.Namespace) -> int:
    facts = collect_facts()
    if args.output:
        facts.data["origin"]["kind"] = "recorded"
        facts.save(args.output)
        print(f"wrote {args.output}: {describe_devices(facts)}", file=sys.stderr)
    else:
        sys.stdout.write(facts.to_json())
    return 0


if __name__ == "__main__":
    sys.exit(main())
