"""Hostile input, everywhere a user can type: one line that says what is wrong, the documented
exit code (4 under pytest, 2 from the rigcheck CLI), never a traceback, nothing created.

Cheap on purpose: the CLI runs in-process, the pytest options in pytester's in-process runs
(they stop at configure time, before any suite file is imported); only `rigcheck check`, which
becomes a new pytest process, is run as a subprocess.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rigcheck import cli

ROOT = Path(__file__).resolve().parents[2]
CLI_BAD_INPUT, PYTEST_USAGE = 2, pytest.ExitCode.USAGE_ERROR
FORBIDDEN = ("Traceback", "INTERNALERROR")

# Files of every bad kind, written into each test's tmp folder by `bad_files`.
BAD_FILES = {
    "missing.json": None,
    "empty.json": "",
    "object.json": "{}",
    "array.json": "[]",
    "null.json": "null",
    "number.json": "1e400",
    "text.json": "not json at all",
    "truncated.json": '{"schema_version": 1, "devi',
    "binary.json": bytes(range(256)),
    "folder": "DIR",
}


def write_bad_files(folder: Path) -> Path:
    """A bad file of every kind in FOLDER, and `a-file` (one byte) to name folders under."""
    for name, content in BAD_FILES.items():
        path = folder / name
        if content == "DIR":
            path.mkdir()
        elif isinstance(content, bytes):
            path.write_bytes(content)
        elif content is not None:
            path.write_text(content)
    (folder / "a-file").write_text("x")
    return folder


@pytest.fixture
def bad(pytester):
    """The folder holding a bad file of every kind; the test (and pytester's runs) run in it."""
    return write_bad_files(pytester.path)


def run_cli(argv: list[str], capsys) -> tuple[int, str]:
    """rigcheck ARGV in-process: its exit code (argparse's own errors exit) and its stderr."""
    try:
        got = cli.main(argv)
    except SystemExit as exc:
        got = exc.code
    return got, capsys.readouterr().err


def assert_one_clean_line(text: str, code: int, wanted: int) -> None:
    assert code == wanted, text
    assert not any(word in text for word in FORBIDDEN), text
    lines = [line for line in text.splitlines() if line.strip()]
    assert 1 <= len(lines) <= 3, text  # argparse adds its usage line to the one-line error


# -- the rigcheck CLI: in-process ------------------------------------------------------------

FILE_KINDS = [k for k in BAD_FILES if k not in ("object.json",)]
NUMBERS = ["nan", "NaN", "inf", "-inf", "1e400", "-1", "0", "abc", ""]

CLI_CASES = (
    [("detect", "--facts", f) for f in BAD_FILES]
    + [("report", f) for f in BAD_FILES]
    + [("diff", f, f) for f in BAD_FILES]
    + [("diff", "binary.json", "missing.json")]
    + [("diff", "x", "y", "--noise", n) for n in [*NUMBERS, "150%", "-5%"] if n != "0"]
    + [("fit", "--params", n, "--device", "a100") for n in NUMBERS]
    + [("fit", "--model", "llama-2-7b", "--vram", v) for v in ["nan", "-1GiB", "0", "1e400GiB"]]
    + [("fit", "--model", "llama-2-7b", opt, n) for opt in ("--batch", "--seq") for n in NUMBERS]
    + [("fit", "--model", "no-such-model"), ("fit", "--model", "llama-2-7b", "--device", "a1")]
    + [("fit",), ("nosuchcommand",), ()]
)


@pytest.mark.parametrize("argv", CLI_CASES, ids=" ".join)
def test_cli_bad_input_is_one_line_and_exit_2(argv, bad, capsys):
    try:
        code = cli.main(list(argv))
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    err = capsys.readouterr().err
    assert_one_clean_line(err, code, CLI_BAD_INPUT)


OUTPUTS = {
    "a folder": lambda t: t / "folder",
    "under a file": lambda t: t / "a-file" / "x.json",
    "under /proc": lambda t: Path("/proc/rigcheck-test/x.json"),
    "in /proc": lambda t: Path("/proc/x.json"),
    "missing parent": lambda t: t / "no" / "such" / "dir" / "x.json",
}


@pytest.mark.parametrize("where", OUTPUTS)
@pytest.mark.parametrize("command", ["facts", "report"])
def test_an_output_path_that_cannot_be_written_creates_nothing(command, where, bad, capsys):
    target = OUTPUTS[where](bad)
    certificate = ROOT / "fixtures" / "certificates" / "h100-node-before.json"
    argv = ["facts", "-o", str(target)] if command == "facts" else ["report", str(certificate)]
    argv += ["-o", str(target)] if command == "report" else []
    before = sorted(bad.rglob("*"))
    code = cli.main(argv)
    assert_one_clean_line(capsys.readouterr().err, code, CLI_BAD_INPUT)
    assert sorted(bad.rglob("*")) == before  # no folder made, nothing written


# -- pytest options: in-process pytester runs ------------------------------------------------

PLAN_BAD = [{"params": v} for v in ["NaN", "inf", "1e400", -1, 0]] + [
    {"model": "no-such-model"},
    {"model": "llama-2-7b", "batch": 0},
    {"model": "llama-2-7b", "seq": -5},
    {"model": "llama-2-7b", "gpus": 0},
]
PYTEST_CASES = (
    [(f"--facts={f}",) for f in BAD_FILES]
    + [(f"--plan={f}",) for f in BAD_FILES]
    + [("--plan=plan.json", json.dumps(p)) for p in PLAN_BAD]
    + [("--gpus", n) for n in ["0", "-1", "100000", "abc", "1.5", "nan"]]
    + [("--report-dir", p) for p in ["a-file", "a-file/sub", "/proc/rigcheck-test", "/dev/full"]]
    + [("--collective-timeout", n) for n in ["nan", "inf", "-1", "0", "abc", "1e400"]]
    + [("--collective-bytes", n) for n in ["0", "-1", "abc", "1e400", "nan"]]
    + [(f"--replay-measurements={f}",) for f in ["missing.json", "empty.json", "binary.json"]]
    + [("--collectives=missing-folder",)]
    + [("-m", m) for m in ["a1000", "cpu and h100", "cpu or", "CPU"]]
)


@pytest.mark.parametrize("args", PYTEST_CASES, ids=" ".join)
def test_pytest_bad_option_is_one_line_and_exit_4(args, bad, pytester):
    if len(args) == 2 and args[0] == "--plan=plan.json":
        (bad / "plan.json").write_text(args[1])
        args = args[:1]
    result = pytester.runpytest_inprocess("-p", "rigcheck.plugin", "-m", "cpu", *args)
    text = "\n".join(result.outlines + result.errlines)
    assert result.ret == PYTEST_USAGE, text
    assert not any(word in text for word in FORBIDDEN), text
    assert [line for line in result.errlines if line.startswith("ERROR")], text
    assert not (bad / "reports").exists()


# -- rigcheck check: pytest in a new process ----------------------------------------------------


@pytest.mark.parametrize(
    "argv", [["a1000"], ["cpu", "--facts=missing.json"], ["cpu", "--gpus", "0"]], ids=" ".join
)
def test_rigcheck_check_bad_input_is_pytests_usage_error(argv, bad):
    result = subprocess.run(
        [sys.executable, "-m", "rigcheck", "check", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=bad,
    )
    assert_one_clean_line(result.stderr, result.returncode, PYTEST_USAGE)
    assert not (bad / "reports").exists()
