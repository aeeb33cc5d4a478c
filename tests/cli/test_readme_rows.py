"""Issue 24: every Everyday-use row of the README works as written right after README (1).

After (1) the commands a user has are rigcheck's own (~/.rigcheck/bin on PATH); a bare `pytest`
or `torchrun` is the system's, without rigcheck's dependencies. So every row is a rigcheck
command (or the venv's `python -m torch.distributed.run`), and each is tried here: `rigcheck
check` rows are collected (`--co`) on the installed suites with their file arguments made real,
the other subcommands' arguments parsed by rigcheck's own parser.
"""

from __future__ import annotations

import importlib.util
import re
import shlex
import shutil
from pathlib import Path

import pytest

from rigcheck.check import pytest_args
from rigcheck.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOTS = ROOT / "fixtures" / "snapshots"


def everyday_commands() -> list[str]:
    """The commands in the `run` column of README's Everyday-use table."""
    text = (ROOT / "README.md").read_text()
    table = text.split("| you want to | run |", 1)[1].split("\n\n", 1)[0]
    rows = [line.split("|")[2] for line in table.splitlines()[2:]]
    found = [cmd for row in rows for cmd in re.findall(r"`([^`]+)`", row)]
    return [cmd for cmd in found if " " in cmd and not cmd.startswith("-")]  # not `--gpus N`


COMMANDS = everyday_commands()
CHECKS = [c for c in COMMANDS if c.startswith("rigcheck check")]


def test_the_table_was_read():
    assert len(COMMANDS) >= 16 and len(CHECKS) >= 10


@pytest.mark.parametrize("command", COMMANDS)
def test_no_row_needs_the_systems_pytest_or_torchrun(command):
    first = command.split()[0]
    assert first == "rigcheck" or command.startswith("python -m torch.distributed.run"), command


@pytest.mark.parametrize("command", [c for c in COMMANDS if not c.startswith("rigcheck check")])
def test_other_rows_parse(command):
    argv = shlex.split(command)
    if argv[0] == "python":  # the venv's python under torchrun: the module it runs is rigcheck's
        module = argv[len(argv) - 1 - argv[::-1].index("-m") + 1]
        assert module.startswith("rigcheck."), module
        assert importlib.util.find_spec(module) is not None, f"{module} does not exist"
        return
    args = build_parser().parse_args(argv[1:])
    assert callable(args.func)


@pytest.fixture
def files(pytester):
    """The files the rows name, made real in the folder the rows run in."""
    shutil.copy(SNAPSHOTS / "h100.json", pytester.path / "machine.json")
    fabric = pytester.path / "docs" / "fabric"
    fabric.mkdir(parents=True)
    shutil.copy(ROOT / "docs" / "fabric" / "dgx-h100.json", fabric)
    (pytester.path / "SHARED").mkdir()
    fit = next(c for c in COMMANDS if c.startswith("rigcheck fit") and " -o plan.json" in c)
    assert main(shlex.split(fit)[1:]) == 0  # the row that writes the plan the next row reads
    return pytester.path


@pytest.mark.parametrize("command", CHECKS)
def test_check_rows_collect(command, files, pytester, monkeypatch):
    monkeypatch.setenv("RIGCHECK_REPORT_DIR", str(files / "reports"))
    argv = shlex.split(command)[2:]
    if not any(a.startswith("--facts") for a in argv):
        named = argv[0] if argv and not argv[0].startswith("-") else "h100"
        argv.append(f"--facts={SNAPSHOTS / named}.json")  # this machine is no h100 or a100
    result = pytester.runpytest_inprocess(*pytest_args(argv), "--co")
    assert result.ret == 0, "\n".join(result.outlines + result.errlines)
    assert any(re.fullmatch(r"suites/\S+\.py(::\S+|: \d+)", line) for line in result.outlines)
