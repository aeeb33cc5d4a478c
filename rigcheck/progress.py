"""Live progress for a run's long steps (the burn-in, the measurements): issue 24.

On a terminal, a rich progress line that moves: the phase, elapsed and, when the step has a
known length, remaining time. Elsewhere (CI logs, a pipe), one plain line as the phase starts,
never a stream of redraws.

pytest captures a check's output; a phase writes around that capture (as pytest's live logging
does), so the person at the terminal sees it while the check runs.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from typing import Any, TextIO


class Phase:
    """One long step on screen; `advance(note)` updates it, leaving it ends it."""

    def __init__(
        self, title: str, total_s: float | None, stream: TextIO, live: bool, cap: bool = False
    ):
        self.title, self.total_s, self.stream, self.live = title, total_s, stream, live
        self.cap = cap  # total_s is a cap (a measurement's), not a known length (a burn-in's)
        self.started = time.monotonic()
        self._progress: Any = None
        self._task: Any = None
        self._note = ""

    def __enter__(self) -> Phase:
        if not self.live:
            self.stream.write(f"rigcheck: {self.title}{self._length()}\n")
            self.stream.flush()
            return self
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        columns: list[Any] = [TextColumn("rigcheck: {task.description}"), TimeElapsedColumn()]
        if self.total_s:
            columns[1:1] = [BarColumn(bar_width=24)]
            columns.append(_time_left_column(self.cap))
        console = Console(file=self.stream, force_terminal=True)
        self._progress = Progress(*columns, console=console, transient=False)
        self._task = self._progress.add_task(self.title, total=self.total_s)
        self._progress.start()
        return self

    def advance(self, note: str = "") -> None:
        """Redraw with the time so far (and a short note, e.g. which rank answered)."""
        if self._progress is None:
            return
        self._note = note
        elapsed = time.monotonic() - self.started
        description = f"{self.title} {note}".rstrip()
        self._progress.update(
            self._task, completed=min(elapsed, self.total_s or elapsed), description=description
        )

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self.advance(self._note)  # the last state stays on screen
            self._progress.stop()

    def _length(self) -> str:
        if not self.total_s:
            return ""
        return f" (at most {self.total_s:.0f} s)" if self.cap else f" ({self.total_s:.0f} s)"


def _time_left_column(cap: bool) -> Any:
    """A column that counts the time left down on every redraw (rich redraws 10 times a
    second), so a step that never calls advance() still shows it moving."""
    from rich.progress import ProgressColumn
    from rich.text import Text

    class TimeLeft(ProgressColumn):
        def render(self, task: Any) -> Text:
            left = max((task.total or 0) - (task.elapsed or 0), 0)
            return Text(f"{'at most ' if cap else ''}{left:.0f} s left")

    return TimeLeft()


def tell(config: Any, line: str) -> None:
    """One line on the real terminal, outside pytest's capture (e.g. why a run waits)."""
    with _uncaptured(config):
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


@contextlib.contextmanager
def _uncaptured(config: Any) -> Iterator[None]:
    plugins = config.pluginmanager if config else None
    capture = plugins.getplugin("capturemanager") if plugins else None
    reporter = plugins.getplugin("terminalreporter") if plugins else None
    uncaptured = capture.global_and_fixture_disabled() if capture else contextlib.nullcontext()
    with uncaptured:
        if reporter is not None:
            reporter.ensure_newline()  # not after pytest's progress dots
        yield


@contextlib.contextmanager
def phase(
    config: Any, title: str, total_s: float | None = None, cap: bool = False
) -> Iterator[Phase]:
    """A Phase on the real terminal, outside pytest's capture; live only on a terminal."""
    with _uncaptured(config):
        stream = sys.stdout
        with Phase(title, total_s, stream, live=stream.isatty(), cap=cap) as shown:
            yield shown
