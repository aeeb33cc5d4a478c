"""Issue 24: a terminal a person reads. `rigcheck check` prints no file paths on its progress
lines and each failure once, as one line of rigcheck's table (the full text is in the report);
pytest-benchmark's table only on request; `rigcheck check --help` is rigcheck's options first.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rigcheck.check import pytest_args
from rigcheck.check_help import GROUP, rigcheck_options
from rigcheck.reports.terminal import render

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = ROOT / "fixtures" / "snapshots" / "cpu.json"
LONG = (
    "all-reduce bus bandwidth below the floor: measured 0.37 GB/s (floor 0.4, achievable 0.5, "
    "datasheet unknown). Run: 2 ranks, 64 MiB float32, algbw 0.37 GB/s, gloo; judged by "
    "allreduce_busbw_gbps. On a CPU host: other processes competing for the cores."
)


@pytest.mark.parametrize(
    "args, quiet",
    [([], True), (["cpu"], True), (["cpu", "-v"], False), (["-vv"], False), (["--verbose"], False)],
)
def test_a_person_gets_the_quiet_terminal_unless_v(args, quiet):
    argv = pytest_args(args)
    assert (argv[:3] == ["-q", "--tb=no", "-rN"]) is quiet


def test_the_users_own_options_come_after_the_defaults():
    argv = pytest_args(["cpu", "--tb=short", "-rfE"])
    assert argv.index("--tb=no") < argv.index("--tb=short") and argv[-1] == "-rfE"


def failure(name: str, message: str, figures: bool = True) -> dict:
    judged = [{"verdict": "fail", "unit": "GB/s", "measured": 0.3698, "floor": 0.4}]
    return {
        "id": f"suites/x.py::{name}", "name": name, "area": "distributed",
        "file": "suites/x.py", "outcome": "fail", "message": message,
        "figures": judged if figures else [],
    }  # fmt: skip


def words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("width", [80, 100, 160])
def test_each_failure_is_whole_within_the_terminal(width):
    """Issue 38: one line each cut every message to a stub at 80 columns ("what it sa"). Each
    message now wraps, whole, within the width; names and figures are never broken."""
    run = {"checks": [failure("test_allreduce_bus_bandwidth", LONG), failure("test_b", "short")]}
    lines = render(run, verbose=False, width=width, color=False).splitlines()
    assert max(len(line) for line in lines) <= width
    [row] = [line for line in lines if "test_allreduce_bus_bandwidth" in line]
    start = row.index("all-reduce")
    rest = lines[lines.index(row) :]
    end = next(i for i, line in enumerate(rest) if "test_b" in line)
    assert words(" ".join(line[start:] for line in rest[:end])) == words(LONG)
    if width >= 100:  # room for the figure columns beside a message of 30 columns or more
        assert "0.3698 GB/s" in row and ">= 0.4 GB/s" in row
    assert "report.html" in "\n".join(lines)


def test_v_prints_every_word():
    run = {"checks": [failure("test_allreduce_bus_bandwidth", LONG)]}
    text = " ".join(render(run, verbose=True, width=100, color=False).split())
    assert "competing for the" in text


@pytest.mark.parametrize(
    "args, table",
    [([], False), (["-v"], True), (["--benchmark-table"], True), (["--benchmark-compare"], True)],
)
def test_the_benchmark_table_only_on_request(args, table, pytester, monkeypatch):
    monkeypatch.setenv("RIGCHECK_REPORT_DIR", str(pytester.path / "reports"))
    config = pytester.parseconfigure("-p", "rigcheck.plugin", f"--facts={SNAPSHOT}", *args)
    assert config.option.benchmark_quiet is not table


def test_rigcheck_options_are_cut_from_pytests_help():
    text = f"general:\n  -k EXPR  x\n\n{GROUP}\n  --facts=FILE  judge\n\nbenchmark:\n  --b  y\n"
    assert rigcheck_options(text) == f"{GROUP}\n  --facts=FILE  judge\n"
    assert rigcheck_options("general:\n  -k EXPR  x\n") == ""


def test_check_help_is_rigchecks_options_first(tmp_path):
    script = Path(sys.executable).with_name("rigcheck")
    command = str(script) if script.exists() else shutil.which("rigcheck") or "rigcheck"
    result = subprocess.run(
        [command, "check", "--help"], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) < 100
    assert lines.index(GROUP) < 15 and any(line.startswith("  --facts=FILE") for line in lines)
    assert "rigcheck check --help-pytest" in result.stdout
