"""What `rigcheck history` shows, gathered from the store, then printed with rich."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rigcheck.errors import HistoryError
from rigcheck.history import store
from rigcheck.history.changes import Change, verdict_changes
from rigcheck.history.events import COLUMNS, cells, events_title, load_events
from rigcheck.history.retention import LAST_RUNS
from rigcheck.history.rows import board_key
from rigcheck.history.trends import Drift, drifts, spec_bands

MASK_MARK = "…"
MAX_COLUMNS = 8  # figure columns in the terminal


@dataclass
class View:
    title: str
    runs: list[dict[str, Any]]
    changes: list[Change] = field(default_factory=list)
    drifts: list[Drift] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # GPUs seen failing before
    total: int | None = None  # runs stored for the title, when more than shown
    events: list[dict[str, Any]] = field(default_factory=list)  # kernel-log events, oldest first
    events_total: int = 0

    @property
    def shown(self) -> str:
        if self.total is not None and self.total > len(self.runs):
            return f"the last {len(self.runs)} of {self.total:,} runs"
        return f"{len(self.runs)} runs"


def build_view(engine: Any, who: str | None, last: int | None = LAST_RUNS) -> View:
    """The newest `last` runs (None: all) of a node, a board or the store, and what they show."""
    title, runs, total, scope = select_runs(engine, who, last)
    view = View(title, runs, verdict_changes(runs), total=total)
    view.events, view.events_total = load_events(engine, **scope, last=last)
    view.drifts = drifts(runs, spec_bands({r["class_name"] for r in runs if r["class_name"]}))
    view.notes = returning_boards(engine, runs)
    return view


def select_runs(
    engine: Any, who: str | None, last: int | None
) -> tuple[str, list[dict[str, Any]], int | None, dict[str, Any]]:
    """(title, the newest `last` runs oldest first, how many the store holds when known, whose
    kernel-log events: load_events' node= or keys=)."""
    if who is None:
        return "every run", store.load_runs(engine, last=last), store.count_runs(engine), {}
    if store.has_node(engine, who):
        runs = store.load_runs(engine, node=who, last=last)
        return f"node {who}", runs, store.count_runs(engine, node=who), {"node": who}
    keys = [board_key(who)]
    runs = store.load_runs(engine, run_keys=store.board_runs(keys), last=last)
    if not runs:
        tail = who.rsplit(MASK_MARK, 1)[-1]
        keys = store.board_keys_for_tail(engine, tail) if len(tail) >= 4 else []
        runs = store.load_runs(engine, run_keys=store.board_runs(keys), last=last) if keys else []
    if not runs:
        nodes = store.node_names(engine, limit=11)
        shown = ", ".join(nodes[:10]) + (" …" if len(nodes) > 10 else "") or "none yet"
        raise _not_found(who, shown)
    board = [only_board(run, set(keys)) for run in runs]
    return f"GPU {who}", board, None, {"keys": [k for k in keys if k]}


def only_board(run: dict[str, Any], keys: set[str]) -> dict[str, Any]:
    """The run as one board saw it: its figures only (labelled gpuN by its index in that run,
    which can differ from node to node), and its failures plus the machine's."""
    indexes = {g["idx"] for g in run["gpus"] if {g["serial_key"], g["uuid_key"]} & keys}
    labels = {f"gpu{i}" for i in indexes}
    return {
        **run,
        "figures": [f for f in run["figures"] if f["label"] in labels],
        "failed": [c for c in run["failed"] if c["gpu"] is None or c["gpu"] in indexes],
    }


def _not_found(who: str, nodes: str) -> Exception:
    return HistoryError(
        f"no node and no GPU serial or UUID {who!r} in the history store (nodes: {nodes}). "
        "A GPU is found by its full serial or UUID, or the last 4 characters a report shows"
    )


def returning_boards(engine: Any, runs: list[dict[str, Any]]) -> list[str]:
    """Each board in these runs that failed in an earlier run (on any node): the latest
    appearance, and the latest failure before it."""
    latest: dict[str, tuple[dict, dict]] = {}  # key -> (run, gpu row)
    for run in runs:
        for gpu in run["gpus"]:
            if gpu["serial_key"]:
                latest[gpu["serial_key"]] = (run, gpu)
    seen = store.failing_sightings(engine, list(latest))
    notes = []
    for key, (run, gpu) in sorted(latest.items(), key=lambda kv: kv[1][0]["started_at"]):
        earlier = [s for s in seen.get(key, []) if s.started_at < run["started_at"]]
        if earlier:
            notes.append(
                f"GPU serial {gpu['serial']} (GPU {gpu['idx']} on {run['node']}, "
                f"{run['started_at'][:10]}) was {earlier[0].text()}"
            )
    return notes


def print_view(view: View) -> None:
    from rich.console import Console
    from rich.markup import escape

    console = Console()
    console.print(runs_table(view))
    figures = figures_table(view)
    if figures is not None:
        console.print(figures)
    for change in view.changes:
        colour = "red" if change.after == "fail" else "green" if change.after == "pass" else ""
        console.print(f"[{colour or 'default'}]{escape(change.text())}[/]", soft_wrap=True)
    if view.events:
        console.print(events_table(view))
    for line in view.notes:
        console.print(f"[red]{escape(line)}[/red]", soft_wrap=True)
    for found in view.drifts:
        console.print(f"[yellow]drift: {escape(found.text())}[/yellow]", soft_wrap=True)
    if not (view.changes or view.notes or view.drifts):
        console.print("no verdict change, no drift, no GPU seen failing before")


def runs_table(view: View):
    from rich.table import Table

    table = Table(title=f"{view.title}: {view.shown}", title_justify="left")
    for column in ("started", "node", "class", "facts", "verdict", "failed"):
        table.add_column(column, overflow="fold")
    for run in view.runs:
        failed = ", ".join(c["name"] for c in run["failed"][:3])
        style = {"fail": "red", "warn": "yellow"}.get(run["verdict"])
        cells = (run["started_at"], run["node"], run["class_name"] or "", run["origin"] or "",
                 run["verdict"], failed)  # fmt: skip
        table.add_row(*cells, style=style)
    return table


def events_table(view: View):
    """The kernel-log events, each line once (the first run that read it)."""
    from rich.table import Table

    table = Table(title=events_title(view.events, view.events_total), title_justify="left")
    for column in COLUMNS:
        table.add_column(column, overflow="fold")
    for event in view.events:
        table.add_row(*cells(event))
    return table


def figures_table(view: View):
    """Each figure over time: a row per run, a column per figure and device."""
    from rich.table import Table

    from rigcheck.reports.plots import fmt_value

    names = sorted({_label(e) for run in view.runs for e in run["figures"]})
    if not names:
        return None
    title = "figures over time"
    if len(names) > MAX_COLUMNS:  # past this a terminal cannot show them: the page can
        title += f" (the first {MAX_COLUMNS} of {len(names)}: all of them with --html FILE)"
        names = names[:MAX_COLUMNS]
    table = Table(title=title, title_justify="left")
    for column in ("started", "node", *names):
        table.add_column(column, overflow="fold")
    for run in view.runs:
        values = {_label(e): fmt_value(e["measured"]) for e in run["figures"]}
        table.add_row(run["started_at"], run["node"], *(values.get(n, "—") for n in names))
    return table


def _label(entry: dict[str, Any]) -> str:
    return " ".join(p for p in (entry["figure"], entry["label"]) if p)
