"""The last screen of a run: the verdict, and a compact table of what failed, root cause first.

When the machine is the wrong product, or torch is unusable, the checks that depend on it fail
too; they are listed once, as "not judged: test_X failed", under the check that explains them.
`-v` lists every check instead of the failures only. Each message is shown whole, wrapped to
the terminal's width (issue 38: cut to one line, at 80 columns every message was a stub); on a
narrow terminal the measured/expected columns give way to it, since the message says them too.
"""

from __future__ import annotations

import io
from typing import Any

from rigcheck.verdict import FAIL

IDENTITY, TORCH = "test_product_matches_class", "test_torch_imports"
# Checks that need a working torch: every measurement and torchrun job, and the fact checks
# that read what torch's child process found (its build, devices, smoke kernels, flash-attn).
TORCH_AREAS = ("perf", "distributed", "memory")
TORCH_FILES = ("test_precision.py", "test_apple.py", "test_software_stack.py")
NOT_TORCH = ("test_driver_meets_class_minimum",)
ROOT_FIRST = (IDENTITY, TORCH)


def check_name(check: dict[str, Any]) -> str:
    return check["name"].split("[")[0]


def root_cause(check: dict[str, Any], failed_roots: set[str]) -> str | None:
    """The failed root check that makes this check's failure a consequence, or None."""
    name = check_name(check)
    if name in ROOT_FIRST:
        return None
    if IDENTITY in failed_roots and name != "test_device_count":
        return IDENTITY
    torch_check = check["area"] in TORCH_AREAS or check["file"].endswith(TORCH_FILES)
    if TORCH in failed_roots and torch_check and name not in NOT_TORCH:
        return TORCH
    return None


def failure_rows(checks: list[dict[str, Any]]) -> tuple[list[dict], dict[str, list[dict]]]:
    """(failures to show, root first; failures explained by a root, by root)."""
    failed = [c for c in checks if c["outcome"] == FAIL]
    roots = {check_name(c) for c in failed if check_name(c) in ROOT_FIRST}
    shown, explained = [], {r: [] for r in ROOT_FIRST}
    for check in failed:
        cause = root_cause(check, roots)
        (explained[cause] if cause else shown).append(check)
    shown.sort(key=lambda c: ROOT_FIRST.index(check_name(c)) if check_name(c) in roots else 9)
    return shown, {r: cs for r, cs in explained.items() if cs}


def render(certificate: dict[str, Any], verbose: bool, width: int, color: bool) -> str:
    from rich.console import Console

    out = io.StringIO()
    console = Console(file=out, width=max(width, 60), force_terminal=color, highlight=False)
    checks = certificate["checks"]
    shown, explained = failure_rows(checks)
    if verbose:
        listed = shown + [c for c in checks if c["outcome"] != FAIL]
        console.print(_table("every check", listed, explained, True, max(width, 60)))
    elif shown:
        table = _table("what failed, root cause first", shown, explained, width=max(width, 60))
        console.print(table)
    return out.getvalue()


def _table(
    title: str,
    checks: list[dict],
    explained: dict[str, list[dict]],
    all_checks: bool = False,
    width: int = 0,
):
    """Every message whole, wrapped; WIDTH (the terminal's, 0: any) decides the figure columns."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    figures = any(c.get("figures") for c in checks)  # measured/expected only where measured
    if figures and width and _message_room(checks, width, figures=True) < MIN_ROOM:
        figures = False  # a narrow terminal: the message says the numbers too (issue 38)
    table = Table(
        title=f"rigcheck: {title}",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_lines=not all_checks,  # a blank line after each failure's wrapped message
        caption=None if all_checks else "the same text is in report.html and certificate.json",
        caption_justify="left",
    )
    columns = ["check", "measured", "expected"] if figures else ["check"]
    # Names whole unless one would leave the message under MIN_ROOM; a figure never broken.
    name_width = max(len(c["name"]) for c in [*checks, {"name": "check"}])
    room = _message_room(checks, width, figures) if width else 0
    if width and room < MIN_ROOM:
        name_width, room = max(name_width - (MIN_ROOM - room), 12), MIN_ROOM
    table.add_column("check", overflow="fold", width=name_width if width else None)
    for column in columns[1:]:
        table.add_column(column, no_wrap=True)
    table.add_column("what it says / what to do", overflow="fold", width=room or None)

    def row(name: str, message: str, check: dict | None = None, style: str | None = None):
        cells = [escape(name), *(_figures(check or {}) if figures else ())]
        table.add_row(*cells, escape(" ".join(message.split())), style=style)

    for check in checks:
        style = {"fail": "red", "warn": "yellow", "skip": "dim", "xfail": "dim"}
        row(
            check["name"],
            check.get("message") or check["outcome"],
            check,
            style.get(check["outcome"]),
        )
        for dependent in explained.get(check_name(check), []):
            row(f"  {dependent['name']}", f"not judged: {check_name(check)} failed", style="dim")
    if all_checks:
        for root, dependents in explained.items():
            if not any(check_name(c) == root for c in checks):
                for dependent in dependents:
                    row(dependent["name"], f"not judged: {root} failed", style="dim")
    return table


# Under this many columns a wrapped message turns into a narrow ribbon (a 250-character message
# in 20 columns is 14 lines): the figure columns give way, the message says them anyway.
MIN_ROOM = 30


def _message_room(checks: list[dict], width: int, figures: bool) -> int:
    """Columns left for the message once the names (and figures) are shown whole."""
    columns = ["check", "measured", "expected"] if figures else ["check"]
    cells = [[c["name"], *(_figures(c) if figures else ())] for c in checks]
    widths = [max([len(col), *(len(row[i]) for row in cells)]) for i, col in enumerate(columns)]
    return width - sum(widths) - 3 * (len(columns) + 1)  # 3 a column: padding, rule


def _figures(check: dict[str, Any]) -> tuple[str, str]:
    figures = check.get("figures") or []
    if not figures:
        return "", ""
    worst = next((f for f in figures if f.get("verdict") == FAIL), figures[0])
    unit = worst.get("unit") or ""
    measured = worst.get("measured")
    floor = worst.get("floor")
    return (
        f"{measured:,.4g} {unit}" if isinstance(measured, int | float) else "",
        f">= {floor:,.4g} {unit}" if isinstance(floor, int | float) else "",
    )
