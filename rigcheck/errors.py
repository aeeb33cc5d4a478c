"""All of rigcheck's own errors, in one hierarchy; and argparse's, as one line."""

from __future__ import annotations

import argparse


class RigcheckError(Exception):
    """Base of every error rigcheck raises on purpose."""


class SpecError(RigcheckError):
    """A spec file is missing, malformed or invalid."""


class UnknownClassError(RigcheckError):
    """A device class was named that has no spec file."""


class FactsError(RigcheckError):
    """A facts snapshot cannot be read or has the wrong schema."""


class FactUnavailable(RigcheckError):
    """A fact the check needs could not be read on this machine."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"fact {path!r} could not be read: {reason}")
        self.path = path
        self.reason = reason


class HistoryError(RigcheckError):
    """The history store cannot be read, or holds nothing under the name asked for."""


def one_line_errors(parser: argparse.ArgumentParser) -> None:
    """PARSER's usage errors, and those of its subcommands, as one line naming the option and
    where the help is (exit 2): argparse's usage block, three or four lines above it, buried
    the one line that matters. A parser with an error() of its own (the Slurm gate's) keeps it."""

    def error(message: str, parser: argparse.ArgumentParser = parser) -> None:
        parser.exit(2, f"{parser.prog}: error: {message} (see {parser.prog} --help)\n")

    if type(parser).error is argparse.ArgumentParser.error and "error" not in vars(parser):
        parser.error = error  # type: ignore[method-assign]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                one_line_errors(sub)


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
        if not arg.strip() and argv[:1] != ["k8s"]:  # a positional: `keygen ''` said "FILE .:
            # is a folder". The gate's CLASS may be empty: detected, as in the Slurm gate.
            return (
                f"{command.prog}: error: an empty argument '' (an unset variable?); give what "
                f"it names (see {command.prog} --help)"
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
