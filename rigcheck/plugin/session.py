"""A run's reports as it goes: every suite check recorded, the certificate rewritten after each.

The run folder is made only once suite checks are selected, so `pytest tests` writes nothing.
A crash leaves the last certificate (marked partial); Ctrl-C and -x write a final one that says
why it is partial; a finished run writes the final certificate and the HTML page.
"""

from __future__ import annotations

import datetime as dt
import shlex
import shutil
from collections import defaultdict
from pathlib import Path
from typing import IO, Any

import pytest

from rigcheck.check import command_line as check_command_line
from rigcheck.gate.busy import not_judged
from rigcheck.plugin.core import SUITES_DIR, is_suite_item, resolve_target
from rigcheck.reports import certificate as cert
from rigcheck.reports.benchmark_json import BenchmarkJson
from rigcheck.reports.ending import (
    claim,
    interrupt_reason,
    take_regressions,
)
from rigcheck.reports.html import write_html
from rigcheck.reports.junit import open_junit
from rigcheck.reports.live_certificate import LiveCertificate
from rigcheck.reports.location import make_run_dir, reports_root, run_name
from rigcheck.reports.masking import masked, secrets_in
from rigcheck.reports.outcome import DETAIL_CHARS, check_outcome, failure_message, with_warning
from rigcheck.reports.run_lock import hold
from rigcheck.reports.terminal import render
from rigcheck.reports.unwritable import (
    REPORT_NOT_WRITTEN,
    ReportWriteError,
    from_os_error,
    remove_if_unreadable,
    root_problem,
)
from rigcheck.verdict import FAIL

JUNIT, HTML, BENCHMARK = "junit.xml", "report.html", "benchmark.json"


class ReportSession:
    """Registered as a plugin for the whole session; inert until suite checks are selected."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.started_at = dt.datetime.now(dt.timezone.utc)
        self.run_dir: Path | None = None
        self.selected: list[str] = []
        self.selected_ids: set[str] = set()
        self.checks: list[dict[str, Any]] = []
        self.done: dict[str, dict[str, Any]] = {}  # the same checks, by node id
        self.collect_errors: list[dict[str, Any]] = []
        self.deselected = 0
        self.reports: dict[str, list[pytest.TestReport]] = defaultdict(list)
        self.warnings: dict[str, list[str]] = defaultdict(list)
        self.current: str | None = None
        self.interrupted: str | None = None
        self.owns_junit = False
        self.verdict: str | None = None
        self.regressions: list[dict[str, str]] = []
        self.final: dict[str, Any] | None = None
        self.session: pytest.Session | None = None
        self.write_error: ReportWriteError | None = None
        self.lock: IO[str] | None = None  # the report folder's run lock (rigcheck.reports.run_lock)
        self.plan_lines: list[str] = []
        self.live: LiveCertificate | None = None  # the certificate while the run goes
        self.history_lines: list[tuple[str, str]] = []  # (colour, text), after the run

    # -- deciding that this is a conformance run --------------------------------------------

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed and self._is_suite_id(report.nodeid):
            self.collect_errors.append(self._collect_error(report))

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.deselected += sum(1 for item in items if is_suite_item(item))

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        ids = [item.nodeid for item in session.items if is_suite_item(item)]
        if not (self.config.option.collectonly or self.config.option.setuponly):
            self._start(ids)  # --setup-only/--setup-plan run no check: no verdict to report

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """Under xdist the controller collects nothing itself: the workers tell it the ids."""
        if self.run_dir is None:
            self._start([i for i in ids if self._is_suite_id(i)])

    def _start(self, suite_ids: list[str]) -> None:
        if self.run_dir is not None or not (suite_ids or self.collect_errors):
            return
        self.target = resolve_target(self.config)
        self.selected = [e["id"] for e in self.collect_errors] + suite_ids
        self.selected_ids = set(self.selected)
        self.checks = list(self.collect_errors)
        try:
            self.run_dir = self._make_run_dir()
        except ReportWriteError as exc:
            return self._cannot_write(exc, after=None)
        self.owns_junit = open_junit(self.config, self.run_dir / JUNIT)
        try:
            self._write()
        except ReportWriteError as exc:
            self._cannot_write(exc, after=None)

    def _make_run_dir(self) -> Path:
        chosen = self.config.getoption("report_dir")
        if chosen:
            path = Path(chosen).expanduser().resolve()
            claim(path)
            self.lock = hold(path.parent, self._say)  # beside the other runs of that folder
            return path
        root = reports_root(self.config.rootpath)
        problem = root_problem(root)
        if problem:
            raise problem
        try:
            root.mkdir(parents=True, exist_ok=True)
            self.lock = hold(root, self._say)
            return make_run_dir(root, run_name(self.started_at))
        except OSError as exc:
            raise from_os_error(exc, root) from None

    def release(self) -> None:
        """Let the next run in this folder start (closing the file releases the flock)."""
        if self.lock is not None:
            self.lock.close()
            self.lock = None

    def _say(self, line: str) -> None:
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is not None:
            terminal.write_line(line, yellow=True)

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session

    def _cannot_write(self, exc: ReportWriteError, after: str | None) -> None:
        """The reports cannot be written: no check after AFTER (a node id; None: no check at
        all) runs. The items are cut, not the session stopped: pytest would call that an
        interruption, and this ends in one line of its own (exit 6)."""
        self.write_error = exc
        self._write_nothing_more()
        items = self.session.items if self.session is not None else []
        ids = [item.nodeid for item in items]
        del items[ids.index(after) + 1 if after in ids else 0 :]

    # -- recording checks ---------------------------------------------------------------------

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        if nodeid in self.selected_ids:
            self.current = nodeid

    def pytest_warning_recorded(self, warning_message: Any, when: str, nodeid: str) -> None:
        if when != "runtest" or nodeid not in self.selected_ids:
            return
        message = warning_message.message
        text = f"{type(message).__name__}: {message}"
        done = self.done.get(nodeid)
        if done is None:
            self.warnings[nodeid].append(text)
        else:  # pytest reports a check's warnings after its teardown report
            with_warning(done, text)
            self.live.forget(self.checks, done)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.run_dir is None or report.nodeid not in self.selected_ids:
            return
        self.reports[report.nodeid].append(report)
        self._note_plan(report)
        if report.when == "teardown":
            reports = self.reports.pop(report.nodeid)
            check = self._check(reports, self.warnings.pop(report.nodeid, []))
            self.checks.append(check)
            self.done[check["id"]] = check
            self.current = None
            try:
                self._write()
            except ReportWriteError as exc:
                self._cannot_write(exc, after=report.nodeid)

    def _note_plan(self, report: pytest.TestReport) -> None:
        """A passing --plan's headroom, for the last screen (the check records it as junit
        properties, which the terminal would not otherwise show)."""
        found = dict(report.user_properties)
        if report.when == "call" and report.passed and "plan_headroom_bytes" in found:
            from rigcheck.memory.units import format_bytes

            plan = self.config.getoption("--plan", None)
            self.plan_lines.append(
                f"--plan {plan} fits: needs {format_bytes(found['plan_needs_bytes'])}, "
                f"headroom {format_bytes(found['plan_headroom_bytes'])} on the fullest device"
            )

    def _check(self, reports: list[pytest.TestReport], warnings: list[str]) -> dict[str, Any]:
        outcome = check_outcome(reports, warnings)
        path, line, name = reports[-1].location
        params = name.partition("[")[2].rstrip("]")
        spec = self.target.spec
        outcome["figures"] = [
            cert.describe_figure(j, spec, j.get("device") or device_label(params, j["figure"]))
            for j in outcome["figures"]
        ]
        return {
            "id": outcome["id"],
            "name": name,
            "area": _area(path),
            "file": path,
            "line": None if line is None else line + 1,
            **{k: v for k, v in outcome.items() if k != "id"},
        }

    def _collect_error(self, report: pytest.CollectReport) -> dict[str, Any]:
        return {
            "id": report.nodeid,
            "name": Path(report.nodeid.split("::")[0]).name,
            "area": _area(report.nodeid),
            "file": report.nodeid.split("::")[0],
            "line": None,
            "outcome": FAIL,
            "phase": "collect",
            "message": "could not be collected: " + failure_message(report),
            "detail": report.longreprtext[-DETAIL_CHARS:],
            "duration_s": 0.0,
            "warnings": [],
            "figures": [],
        }

    # -- the end of the run ---------------------------------------------------------------------

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo) -> None:
        if self.write_error is not None:  # the run stopped itself: no report to write
            return
        self.interrupted = interrupt_reason(excinfo)
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is not None and issubclass(excinfo.type, KeyboardInterrupt):
            terminal.write_line(
                f"rigcheck: {self.interrupted}: writing the reports "
                "(another Ctrl-C is ignored; kill -9 forces)",
                yellow=True,
            )

    def finish(self, session: pytest.Session, exitstatus: int) -> None:
        """The final certificate and page (rigcheck.plugin.reports calls it at sessionfinish)."""
        if self.write_error is None and self.run_dir is not None:
            try:
                self._finish(session, exitstatus)
            except ReportWriteError as exc:
                self.write_error, self.final = exc, None
        if self.write_error is not None:
            session.exitstatus = REPORT_NOT_WRITTEN

    def _finish(self, session: pytest.Session, exitstatus: int) -> None:
        regressions = take_regressions(self.config)
        if regressions and exitstatus == 0:  # a regression fails the run, as the docs say
            session.exitstatus = exitstatus = 1
        self.regressions = regressions
        reason = self._final_partial_reason(session)
        if reason and exitstatus == pytest.ExitCode.OK:  # a measurement past its cap: not a pass
            session.exitstatus = exitstatus = pytest.ExitCode.INTERRUPTED
        if reason and exitstatus == pytest.ExitCode.INTERNAL_ERROR:
            reason = f"crashed: internal error in pytest or a plugin, {reason}"
        final = self._write(exitstatus, reason)
        try:
            write_html(self.run_dir / HTML, final)
        except OSError as exc:
            raise from_os_error(exc, self.run_dir / HTML) from None
        self.final = final
        self.history_lines = self._remember(final)

    def _remember(self, final: dict[str, Any]) -> list[tuple[str, str]]:
        """The run kept in the history store and, if asked, as Prometheus metrics: each problem
        one warning line, never a change to the verdict or the exit status (rigcheck.history)."""
        from rigcheck.history.run_hook import export_metrics, remember_run

        facts = self.target.facts.data
        lines = remember_run(self.config.getoption("history"), final, facts)
        return lines + export_metrics(self.config.getoption("prometheus_textfile"), final, facts)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int):
        """Before pytest-benchmark saves: benchmark.json goes into the run folder. A report
        that cannot be written there (junit.xml, benchmark.json) ends the run with exit 6."""
        if self.write_error is None and self.run_dir is not None:
            self._point_benchmark_json()
        try:
            result = yield
        except OSError as exc:
            self.write_error = self.write_error or from_os_error(exc, self.run_dir or Path("."))
            session.exitstatus = REPORT_NOT_WRITTEN
            result = None
        if self.owns_junit and self.run_dir is not None:
            if self.write_error is not None:
                remove_if_unreadable(self.run_dir / JUNIT)
            else:
                self._mask_junit()
        return result

    def _write_nothing_more(self) -> None:
        """The reports cannot be written: junit.xml and pytest-benchmark's files are not tried."""
        from _pytest.junitxml import xml_key

        xml = self.config.stash.get(xml_key, None)
        if self.owns_junit and xml is not None:
            self.config.pluginmanager.unregister(xml)
            del self.config.stash[xml_key]
        bench = getattr(self.config, "_benchmarksession", None)
        if bench is not None:
            bench.json = bench.save = bench.autosave = None

    def _final_partial_reason(self, session: pytest.Session) -> str | None:
        done, total = len(self.checks), len(self.selected)
        progress = f"after {done} of {total} checks"
        if self.interrupted:
            during = f", during {self.current}" if self.current else ""
            return f"{self.interrupted} {progress}{during}"
        if done < total:
            why = session.shouldfail or session.shouldstop or "the run stopped early"
            return f"{why} ({progress})"
        return incomplete_measurements(self.config)

    def _write(self, exit_status: int | None = None, partial_reason: str | None = "") -> dict:
        """The certificate: while the run goes, after each check (rigcheck.reports.
        live_certificate, at a cost that does not grow with the run); in full at its end."""
        if exit_status is None:
            return self._write_progress()
        certificate = cert.build_certificate(
            run=self._run_info(finished=True),
            target=self.target,
            checks=self.checks,
            selected=self.selected,
            exit_status=exit_status,
            partial_reason=partial_reason,
            unmask=self.config.getoption("unmask_serials"),
            regressions=self.regressions,
        )
        try:
            cert.write_certificate(self.run_dir / cert.FILE_NAME, certificate)
            if self.live is not None:
                self.live.close()
        except OSError as exc:
            raise from_os_error(exc, self.run_dir / cert.FILE_NAME) from None
        self.verdict = certificate["verdict"]
        return certificate

    def _write_progress(self) -> None:
        partial_reason = (
            f"run in progress: {len(self.checks)} of {len(self.selected)} checks done when "
            "this was written (if the run has ended, it was killed or crashed)"
        )
        try:
            if self.live is None:
                unmask = self.config.getoption("unmask_serials")
                first = cert.build_certificate(
                    run=self._run_info(finished=False), target=self.target, checks=[],
                    selected=self.selected, exit_status=None, partial_reason=partial_reason,
                    unmask=unmask, mask_here=False,
                )  # fmt: skip
                self.live = LiveCertificate(self.run_dir, first, self.target.facts.data, unmask)
            self.verdict = self.live.write(self.checks, partial_reason)
        except OSError as exc:
            raise from_os_error(exc, self.run_dir / cert.FILE_NAME) from None

    def _run_info(self, finished: bool) -> dict[str, Any]:
        now = dt.datetime.now(dt.timezone.utc)
        args = self.config.invocation_params.args
        return {
            "id": self.run_dir.name,
            "command_line": check_command_line() or shlex.join(["pytest", *args]),
            "args": list(args),
            "cwd": str(self.config.invocation_params.dir),
            "started_at": _iso(self.started_at),
            "finished_at": _iso(now) if finished else None,
            "duration_s": round((now - self.started_at).total_seconds(), 2) if finished else None,
            "report_dir": str(self.run_dir),
        }

    def _point_benchmark_json(self) -> None:
        """pytest-benchmark's data for this run as benchmark.json in the run folder (storing it
        for --benchmark-compare is rigcheck.plugin.measure's), unless --benchmark-json chose."""
        bench = getattr(self.config, "_benchmarksession", None)
        if bench is not None and any(bench.benchmarks) and not bench.json:
            bench.json = BenchmarkJson(self.run_dir / BENCHMARK)

    def _mask_junit(self) -> None:
        path = self.run_dir / JUNIT
        secrets = secrets_in(self.target.facts.data)
        if path.exists() and secrets and not self.config.getoption("unmask_serials"):
            cert.write_atomic(path, masked(path.read_text(encoding="utf-8"), secrets))

    def print_verdict(self) -> None:
        """The run's last screen, after pytest's own counts: failures table, then the verdict."""
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        if self.write_error is not None and terminal is not None:
            terminal.write_line(self.write_error.line(), red=True, bold=True)
            return
        if self.run_dir is None or self.final is None or terminal is None:
            return
        width = shutil.get_terminal_size().columns
        verbose = self.config.option.verbose > 0
        terminal.write(render(self.final, verbose, width, terminal.hasmarkup))
        for found in self.regressions:
            terminal.write_line(
                f"rigcheck: regressed: {found['benchmark']}: {found['reason']}", red=True
            )
        for line in self.plan_lines:
            terminal.write_line(f"rigcheck: {line}", green=True)
        for colour, line in self.history_lines:
            terminal.write_line(f"rigcheck: {line}", **{colour: True})
        shown = _relative(self.run_dir, self.config.invocation_params.dir)
        s = self.final["summary"]
        unjudged = not_judged(self.final["checks"])  # --busy-node: skipped, but not n/a
        counts = (
            f"{s['fail']} failed, {s['pass'] + s['warn']} passed, "
            f"{s['skip'] - unjudged} not applicable"
        )
        counts += f", {unjudged} NOT JUDGED (busy node)" if unjudged else ""
        if not s.get("measured"):  # a pass on facts alone says nothing of the machine's speed
            counts += "; nothing measured"
        color = {"pass": "green", "warn": "yellow"}.get(self.verdict, "red")
        # "verdict INCOMPLETE: stopped: ...", not "INCOMPLETE: incomplete: stopped: ..."
        root = (self.final.get("root_cause") or "").removeprefix(f"{self.verdict}: ")
        cause = f": {root}" if root else ""
        terminal.write_sep(
            "=",
            f"rigcheck: verdict {self.verdict.upper()}{cause} ({counts}) — {shown}/report.html",
            **{color: True, "bold": True},
        )

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if (
            self.run_dir is not None
            or self.write_error is not None
            or self.config.option.collectonly
        ):
            return
        if self.deselected:
            option = self.config.option
            chosen = [f"-m {option.markexpr!r}" if option.markexpr else ""]
            chosen.append(f"-k {option.keyword!r}" if option.keyword else "")
            terminalreporter.write_line(
                f"rigcheck: nothing was checked: {' '.join(filter(None, chosen))} selected none "
                f"of the {self.deselected} checks in suites/, which is not a pass (exit 5). "
                "Loosen the selection, e.g. just the class: rigcheck check CLASS (in a clone: "
                "pytest -m CLASS)",
                red=True,
            )

    def _is_suite_id(self, nodeid: str) -> bool:
        path = (self.config.rootpath / nodeid.split("::")[0]).resolve()
        return SUITES_DIR in path.parents


def incomplete_measurements(config: pytest.Config) -> str | None:
    """The reason a finished run is INCOMPLETE: measurements that could not finish in their
    time cap (rigcheck.measure.timing.CAP_S); None when there were none."""
    from rigcheck.measure.check import INCOMPLETE_KEY

    found = config.stash.get(INCOMPLETE_KEY, [])
    why = f"{len(found)} measurement(s) could not finish in their time cap: " + "; ".join(found)
    return why if found else None


def device_label(params: str, figure: str) -> str | None:
    """'gpu3' from test_matmul_tflops[gpu3-bf16] for matmul_bf16_tflops: the parameters that
    do not name the figure itself say which device a bar is."""
    parts = [p for p in params.split("-") if p and p not in figure]
    return "-".join(parts) or params or None


def _area(path: str) -> str:
    parts = Path(path).parts
    return parts[parts.index("suites") + 1] if "suites" in parts[:-2] else Path(path).parent.name


def _iso(moment: dt.datetime) -> str:
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def _relative(path: Path, base: Path) -> str:
    try:
        return str(path.relative_to(base))
    except ValueError:
        return str(path)
