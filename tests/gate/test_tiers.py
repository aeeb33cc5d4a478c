"""`--tier`: the tier's checks only, and its time budget enforced. A check still running at the
deadline ends the run INCOMPLETE (exit 2, the reason in the certificate), never a pass: shown on
a real subprocess run of the suites whose third check is held in a 120 s sleep by the test-only
steering plugin (tests/reports/steer_run.py)."""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rigcheck.check import pytest_args
from rigcheck.gate.deadline import Deadline
from rigcheck.gate.tiers import ACCEPTANCE, QUICK, STANDARD, in_tier, parse_tier
from rigcheck.reports.certificate import load_certificate

REPO = Path(__file__).resolve().parents[2]
# Recorded on a CI runner with `rigcheck facts -o` (its origin says so): a cpu-class machine.
CPU_FACTS = REPO / "fixtures" / "snapshots" / "cpu-ci.json"
STEER = REPO / "tests" / "reports"


def run_suites(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """`pytest -m cpu ARGS` on the recorded cpu snapshot, with the steering plugin loaded."""
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "steer_run",
               "-m", "cpu", f"--facts={CPU_FACTS}", f"--report-dir={tmp_path / 'run'}",
               *args, str(REPO / "suites")]  # fmt: skip
    environment = {**_clean_env(), "PYTHONPATH": str(STEER), **env}
    return subprocess.run(
        command, cwd=REPO, env=environment, capture_output=True, text=True, timeout=300
    )


def _clean_env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("RIGCHECK_STEER_")}


def test_a_check_that_overruns_the_deadline_ends_the_run_incomplete(tmp_path):
    started = time.monotonic()
    done = run_suites(
        tmp_path, "--tier", "quick", "--tier-budget", "5",
        RIGCHECK_STEER_PAUSE_AT="3", RIGCHECK_STEER_READY=str(tmp_path / "paused"),
    )  # fmt: skip
    took = time.monotonic() - started
    output = done.stdout + done.stderr
    assert done.returncode == pytest.ExitCode.INTERRUPTED, output
    certificate = load_certificate(tmp_path / "run")
    assert certificate["verdict"] == "incomplete" and certificate["partial"] is True, output
    assert "tier quick: its 5 s time budget ran out" in certificate["partial_reason"]
    # The same reason on the terminal's last line, once (one root-cause line everywhere).
    assert (
        "rigcheck: verdict INCOMPLETE: stopped: tier quick: its 5 s time budget ran out"
        in (done.stdout.strip().splitlines()[-1])
    )
    assert certificate["root_cause"].startswith("incomplete: stopped: tier quick: its 5 s")
    # The held check never reported: it is not a pass, it is listed as not run.
    assert certificate["summary"]["done"] <= 2 and certificate["summary"]["fail"] == 0
    paused = (tmp_path / "paused").read_text()
    assert paused in certificate["not_run"] and paused in certificate["partial_reason"]
    # The alarm cut the 120 s sleep short: the deadline is enforced inside a check, not between.
    assert took < 60, f"the run took {took:.0f} s: the deadline did not stop the held check"


def test_the_quick_tier_runs_only_fact_checks_and_passes(tmp_path):
    # Whether 10 s is enough is test_quick_tier_benchmark's question (serial, load-checked):
    # here a loaded 2-core host must not turn the selection's test red.
    done = run_suites(tmp_path, "--tier", "quick", "--tier-budget", "600")
    certificate = load_certificate(tmp_path / "run")
    assert done.returncode == 0, done.stdout + done.stderr
    assert certificate["verdict"] == "pass"
    assert {c["area"] for c in certificate["checks"]} == {"facts"}
    assert "deselected" in done.stdout  # perf, memory, distributed and burn-in left out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tier", "slow"], "unknown tier 'slow': choose one of quick, standard, acceptance"),
        (["--tier-budget", "5"], "--tier-budget needs --tier"),
        (["--tier", "quick", "--tier-budget", "0"], "a finite number of seconds above 0"),
        (["--tier", "quick", "--tier-budget", "nan"], "'nan' is not a time"),
    ],
)
def test_a_wrong_tier_option_is_a_usage_error(tmp_path, args, message):
    done = run_suites(tmp_path, *args)
    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    assert message in done.stderr
    assert not (tmp_path / "run").exists()


def test_tiers_nest_and_their_budgets_grow():
    assert QUICK.areas < STANDARD.areas < ACCEPTANCE.areas
    assert (QUICK.budget_s, STANDARD.budget_s, ACCEPTANCE.budget_s) == (10, 120, 600)
    assert ACCEPTANCE.burn_in_s and not QUICK.burn_in_s and not STANDARD.burn_in_s


def test_a_check_is_in_a_tier_by_its_area_marker():
    assert in_tier(QUICK, {"facts", "cpu"})
    assert not in_tier(QUICK, {"perf", "cpu"})
    assert in_tier(STANDARD, {"perf"}) and not in_tier(STANDARD, {"distributed"})
    assert in_tier(ACCEPTANCE, {"burn_in"})
    assert not in_tier(ACCEPTANCE, {"cpu"})  # no area: not in any tier


def test_parse_tier_names_the_tiers():
    assert parse_tier("standard") is STANDARD
    with pytest.raises(argparse.ArgumentTypeError, match="choose one of quick"):
        parse_tier("Quick")


def test_rigcheck_check_takes_the_class_after_the_tier():
    args = pytest_args(["--tier", "quick", "h100", "-q"])
    assert args[-5:] == ["--tier", "quick", "-m", "h100", "-q"]
    assert pytest_args(["--tier=standard", "cpu"])[-3:] == ["--tier=standard", "-m", "cpu"]
    assert pytest_args(["cpu", "--tier", "quick"])[-4:] == ["-m", "cpu", "--tier", "quick"]


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_deadline_stops_a_phase_that_starts_after_it():
    clock = FakeClock()
    deadline = Deadline(10, "tier quick", clock=clock)
    clock.now += 9.5
    assert deadline.remaining_s() == pytest.approx(0.5)
    deadline.arm()  # time left: the alarm is set, nothing stops
    deadline.disarm()
    clock.now += 0.5
    with pytest.raises(pytest.exit.Exception, match="tier quick: its 10 s time budget ran out"):
        deadline.arm()


def test_the_alarm_stops_a_running_phase_and_leaves_sigalrm_as_it_was():
    import signal

    before = signal.getsignal(signal.SIGALRM)
    deadline = Deadline(0.2, "tier quick")
    deadline.arm()
    try:
        with pytest.raises(pytest.exit.Exception, match=r"its 0\.2 s time budget ran out"):
            time.sleep(5)  # a check's phase that would overrun
    finally:
        deadline.disarm()
    assert signal.getsignal(signal.SIGALRM) == before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_every_suite_file_belongs_to_a_tier():
    """A suite file with no area marker would run in no tier, quietly: name it here instead."""
    import ast

    outside = []
    for path in sorted((REPO / "suites").rglob("test_*.py")):
        marks = {
            node.attr
            for assign in ast.parse(path.read_text()).body
            if isinstance(assign, ast.Assign)
            and any(getattr(t, "id", None) == "pytestmark" for t in assign.targets)
            for node in ast.walk(assign.value)
            if isinstance(node, ast.Attribute)
        }
        if not in_tier(ACCEPTANCE, marks):
            outside.append(path.relative_to(REPO).as_posix())
    assert outside == [], "suite files whose pytestmark names no tier area (rigcheck/gate/tiers.py)"
