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
