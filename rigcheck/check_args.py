"""`rigcheck check`'s own reading of its command line, before pytest gets it.

Two mistakes pytest would accept silently: a second `-m` replaces the class (`rigcheck check
cpu -m "not perf"` would judge the detected class, not cpu), and `-n N` runs checks in parallel
processes that measure each other's load. The first is combined, the second refused.
"""

from __future__ import annotations

from collections.abc import Sequence

PARALLEL_OPTIONS = ("-n", "--numprocesses")
SERIAL_VALUES = ("0",)  # pytest-xdist's "no workers"


def with_class(chosen: str, args: Sequence[str]) -> list[str]:
    """ARGS with the class folded into the -m expression pytest will use (its last -m)."""
    out: list[str] = []
    expr = None
    rest = iter(args)
    for arg in rest:
        if arg == "-m":
            expr = next(rest, None)
        elif arg.startswith("-m") and not arg.startswith("--"):
            expr = arg[2:]
        else:
            out.append(arg)
    combined = chosen if expr is None or not expr.strip() else f"{chosen} and ({expr})"
    return ["-m", combined, *out]


def parallel_problem(args: Sequence[str]) -> str | None:
    """Why ARGS cannot run as they are (parallel workers), or None."""
    for i, arg in enumerate(args):
        value = _option_value(arg, args[i + 1 : i + 2])
        if value is not None and value not in SERIAL_VALUES:
            return (
                f"{arg if '=' in arg or len(arg) > 2 else arg + ' ' + value}: rigcheck runs its "
                "checks one at a time, so that no measurement times another's load. Leave -n out"
            )
    return None


def _option_value(arg: str, following: Sequence[str]) -> str | None:
    """The value of -n/--numprocesses in ARG (or in the argument after it), else None."""
    if arg in PARALLEL_OPTIONS:
        return following[0] if following else ""
    if arg.startswith("--numprocesses="):
        return arg.split("=", 1)[1]
    if arg.startswith("-n") and not arg.startswith("--"):
        return arg[2:]
    return None
