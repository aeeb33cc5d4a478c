"""Numbers a person types (options, RIGCHECK_* settings, the gate's rigcheck.env, a --plan's
strings): written with the digits 0-9, never read from another script's digits.

Python's int() and float() also read '１０' (full-width), '٣' (Arabic-Indic) and '1_000'; a
regex's \\d and str.isdigit() match such digits too, and isdigit() is true for '²', which int()
then refuses with a traceback. A setting with a pasted full-width digit is a typo: each surface
refuses it with its own one line naming the setting, never reads it as a number (a Slurm gate
reading '１０' as a 10 s budget, or draining a node over it). JSON numbers need nothing:
json.loads reads 0-9 only.
"""

from __future__ import annotations

import re

WHOLE = re.compile(r"[0-9]+")


def is_plain(text: str) -> bool:
    """ASCII, with no '_' grouping: what int() and float() read is what a person reads."""
    return text.isascii() and "_" not in text


def is_whole(text: str) -> bool:
    """Only the digits 0-9 (str.isdigit() is true for '²' and '１０')."""
    return WHOLE.fullmatch(text) is not None


def plain_int(text: str) -> int:
    """int(text) for the digits 0-9 only; ValueError otherwise (the caller names the setting)."""
    if not is_plain(text):
        raise ValueError(f"{text!r} is not written with the digits 0-9")
    return int(text)


def plain_float(text: str) -> float:
    """float(text) for the digits 0-9 only ('nan' and 'inf' as float() reads them: the caller
    refuses what it cannot take); ValueError otherwise."""
    if not is_plain(text):
        raise ValueError(f"{text!r} is not written with the digits 0-9")
    return float(text)


def int_option(text: str) -> int:
    """argparse's type=int for the digits 0-9 only."""
    return plain_int(text)


def float_option(text: str) -> float:
    """argparse's type=float for the digits 0-9 only."""
    return plain_float(text)


# argparse names the type in its error ("argument --gpus: invalid int value: '１'"): the same
# line as type=int gave for 'abc'.
int_option.__name__ = "int"
float_option.__name__ = "float"
