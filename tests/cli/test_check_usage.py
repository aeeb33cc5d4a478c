"""Issue 24: every mistake on `rigcheck check`'s command line is a usage error (exit 4, one
line), never a verdict; the class named stays the class judged; and the suites run are always
the installed package's, whatever folder the command is typed in.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rigcheck import check_args
from rigcheck.check import pytest_args
from rigcheck.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = ROOT / "fixtures" / "snapshots" / "cpu.json"
USAGE = pytest.ExitCode.USAGE_ERROR


def rigcheck_script() -> str:
    """The installed console script: unlike `python -m rigcheck`, it does not itself put the
    current folder on sys.path, so only `rigcheck check`'s own pytest process can."""
    script = Path(sys.executable).with_name("rigcheck")
    return str(script) if script.exists() else shutil.which("rigcheck") or "rigcheck"


# -- the class named is the class judged -----------------------------------------------------


@pytest.mark.parametrize(
    "args, expr",
    [
        (["cpu"], "cpu"),
        (["cpu", "-m", "not perf"], "cpu and (not perf)"),
        (["cpu", "-mfacts"], "cpu and (facts)"),
        (["cpu", "-m", "perf", "-q", "-m", "facts or perf"], "cpu and (facts or perf)"),
        (["cpu", "-m", " "], "cpu"),
    ],
)
def test_a_second_m_is_combined_with_the_class(args, expr):
    argv = pytest_args(args)
    assert argv.count("-m") == 1, argv
    assert argv[argv.index("-m") + 1] == expr


def test_no_class_leaves_the_m_expression_alone():
    argv = pytest_args(["-m", "not perf", "-q"])
    assert argv[-3:] == ["-m", "not perf", "-q"]


def test_other_arguments_keep_their_order():
    assert check_args.with_class("cpu", ["-k", "x", "-m", "facts", "-q"]) == [
        "-m",
        "cpu and (facts)",
        "-k",
        "x",
        "-q",
    ]


# -- parallel workers would measure each other's load ------------------------------------------


@pytest.mark.parametrize(
    "args", [["-n", "2"], ["-n2"], ["--numprocesses", "auto"], ["--numprocesses=4"], ["-n"]]
)
def test_parallel_workers_are_refused(args):
    problem = check_args.parallel_problem(["cpu", "-q", *args])
    assert problem is not None
    assert "-n" in problem or "--numprocesses" in problem


@pytest.mark.parametrize(
    "args", [[], ["-n", "0"], ["-n0"], ["--numprocesses=0"], ["-k", "n"], ["--nodeid"]]
)
def test_serial_runs_are_accepted(args):
    assert check_args.parallel_problem(["cpu", *args]) is None


def test_the_refusal_names_what_was_typed():
    assert check_args.parallel_problem(["-n", "2"]).startswith("-n 2: ")
    assert check_args.parallel_problem(["-n2"]).startswith("-n2: ")
    assert check_args.parallel_problem(["--numprocesses=3"]).startswith("--numprocesses=3: ")


# -- through the command, as a user types it --------------------------------------------------


def run_check(cwd: Path, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [rigcheck_script(), "check", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


def test_check_n_2_is_a_usage_error(tmp_path):
    result = run_check(tmp_path, "cpu", "-n", "2", f"--facts={SNAPSHOT}")
    assert result.returncode == USAGE, result.stderr
    assert result.stderr.count("\n") == 1 and "-n 2" in result.stderr
    assert not (tmp_path / "reports").exists()


def test_the_installed_suites_run_even_where_a_rigcheck_folder_shadows_them(tmp_path):
    """Inside a clone, `python -m pytest` put ./rigcheck first on sys.path (issue 24): here the
    shadow refuses to be imported, so the run passes only if it never is."""
    shadow = tmp_path / "rigcheck"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("raise SystemExit('the current folder shadowed rigcheck')")
    result = run_check(tmp_path, "cpu", "-m", "facts", f"--facts={SNAPSHOT}", "-q")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "verdict PASS (0 failed, 11 passed" in result.stdout  # cpu's fact checks, judged


# -- pytest options read before judging -------------------------------------------------------


def test_a_malformed_burn_in_trace_is_a_usage_error(pytester):
    pytester.path.joinpath("bad.json").write_text('{"bad')
    result = pytester.runpytest_inprocess(
        "-p", "rigcheck.plugin", "-m", "cpu", f"--facts={SNAPSHOT}", "--burn-in-trace=bad.json"
    )
    assert result.ret == USAGE
    assert any("--burn-in-trace: bad.json: not valid JSON" in line for line in result.errlines)
    assert not (pytester.path / "reports").exists()


def test_a_good_burn_in_trace_is_still_judged(pytester):
    trace = ROOT / "fixtures" / "burnin" / "cpu-ci.json"
    result = pytester.runpytest_inprocess(
        str(ROOT / "suites" / "burnin"), "-p", "rigcheck.plugin", "-m", "cpu",
        f"--facts={SNAPSHOT}", f"--burn-in-trace={trace}", f"--report-dir={pytester.path / 'run'}",
    )  # fmt: skip
    assert result.ret in (0, 1)  # judged: a verdict, whichever it is
    assert result.parseoutcomes().get("passed", 0) + result.parseoutcomes().get("failed", 0)


def test_compare_with_no_such_stored_run_is_a_usage_error(pytester, monkeypatch):
    monkeypatch.setenv("RIGCHECK_REPORT_DIR", str(pytester.path / "reports"))
    result = pytester.runpytest_inprocess(
        "-p", "rigcheck.plugin", "-m", "cpu", f"--facts={SNAPSHOT}", "--benchmark-compare=9999"
    )
    assert result.ret == USAGE
    assert any("--benchmark-compare=9999: no stored run" in line for line in result.errlines)
    assert not list((pytester.path / "reports").glob("*/certificate.json"))


# -- the other subcommands ----------------------------------------------------------------------


def subcommands() -> list[str]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sorted(name for name in sub.choices if name != "check")  # check's help is pytest's


@pytest.mark.parametrize("name", subcommands())
def test_every_subcommand_has_help(name, capsys):
    with pytest.raises(SystemExit) as stop:
        main([name, "--help"])
    assert stop.value.code == 0
    assert "usage: rigcheck" in capsys.readouterr().out
