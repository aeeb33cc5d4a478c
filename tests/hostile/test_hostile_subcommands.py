"""Issue 38's sweep: hostile or mistaken input to every other `rigcheck` subcommand (history,
fleet, coverage, keygen, attest, verify, blame, slurm, k8s, and empty values anywhere) and the
RIGCHECK_* settings. Each gets one line saying what is wrong and how to fix it, exit 2 (or the
gate's own code: docs/exit-codes.md), no traceback, and nothing overwritten.

The held-out list is kept from the project; this one is ours (2026-11-29), run in-process. What
it found on main: `--history sqlite:///FILE` wrote SQLite's tables over a small file that was not
a store; an empty `-o ''` printed the snapshot or wrote beside the certificate; a typo'd
$RIGCHECK_EXPECTED_DIR made every class unknown ("Known classes: " and nothing), and was an
INTERNALERROR under pytest; $RIGCHECK_HISTORY_KEEP_PASSES=abc silently kept 10; `blame --timeout
nan` was accepted; `coverage --json DIR` ran the whole campaign before failing to write;
`history --html /proc/x` named a temporary file; argparse's errors came under a usage block of
three or four lines; SQLAlchemy's came with a second line.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.hostile.test_hostile_input import assert_one_clean_line, run_cli, write_bad_files

ROOT = Path(__file__).resolve().parents[2]
CERTIFICATE = ROOT / "fixtures" / "certificates" / "h100-node-before.json"
CERT = "cert.json"  # a copy in the test's folder: a report written beside it stays there
SNAPSHOT = str(ROOT / "fixtures" / "snapshots" / "cpu.json")
NUMBERS = ["nan", "-1", "0", "1e400"]  # each kind of bad number, once per option
# the bad files whose handling differs: absent, cut short, not text, a folder
FILES = ["missing.json", "truncated.json", "binary.json", "folder"]
STORE = "sqlite:///h.db"


def cases() -> list[tuple[dict[str, str], list[str], int, str]]:
    """(environment, argv, exit code, a word the one line must hold)."""
    c: list[tuple[dict[str, str], list[str], int, str]] = []
    add = lambda argv, word, code=2, env=None: c.append((env or {}, argv, code, word))  # noqa: E731
    # history
    for url in ["sqlite:///a-file", "sqlite:///folder", "nosuch://x", "garbage"]:
        add(["history", "--history", url], "history store")
    for n in ["-1", "nan", "abc"]:
        add(["history", "--last", n, "--history", STORE], "--last")
        add(["history", "prune", "--keep-passes", n, "--history", STORE], "--keep-passes")
    for age in ["abc", "0d", "1e400d"]:
        add(["history", "prune", "--older-than", age, "--history", STORE], "--older-than")
    add(["history", "--html", "folder", "--history", STORE], "is a folder")
    add(["history", "--html", "/proc/x.html", "--history", STORE], "--html /proc/x.html")
    add(
        ["history", "--history", STORE, "no-such-node"], "no history store at"
    )  # a known store, an unknown node: tests/history/test_store.py
    for keep in ["abc", "-3"]:
        env = {"RIGCHECK_HISTORY_KEEP_PASSES": keep}
        add(["history", "prune", "--older-than", "1d", "--history", STORE], "KEEP_PASSES", env=env)
    # fleet
    for name in [*FILES, "array.json"]:
        add(["fleet", name], name)
    for band in ["nan", "-1", "2"]:
        add(["fleet", "--band", band, CERT], "--band")
    add(["fleet", "--from-history", "sqlite:///folder"], "history store")
    add(["fleet", "-o", "folder", CERT], "folder")
    add(["fleet"], "name the folders")
    # coverage (options checked before the campaign starts)
    for n in ["-1", "nan", "1e400"]:
        add(["coverage", "--class", "h100", "--healthy", n], "--healthy")
    add(["coverage", "--class", "h100", "--json", "folder"], "--json folder")
    add(["coverage", "--class", "h100", "--markdown", "/proc/x.md"], "--markdown")
    add(["coverage", "--class", "h100", "--baseline", "missing.json"], "--baseline")
    add(["coverage"], "--class")
    # keygen, attest, verify
    for where in ["folder", "a-file/x", "/proc/x"]:
        add(["keygen", where], where)
    for name in [*FILES, "object.json"]:
        add(["attest", name, "--nonce", "n"], name)
        add(["verify", name, "--nonce", "n", "--key", "text.json"], "text.json")
    add(["verify", CERT, "--nonce", "n", "--not-before", "garbage"], "--not-before")
    add(["verify", CERT, "--nonce", "n"], "public key", env={"RIGCHECK_ATTEST_PUBLIC_KEY": "x"})
    # blame
    for where in ["missing", "a-file", "folder"]:
        add(["blame", where], where)
    for n in NUMBERS:
        add(["blame", "folder", "--timeout", n], "--timeout")
    # slurm: a usage error is logged loudly; health exits 2, the prolog and epilog 0
    for n in NUMBERS:
        add(["slurm", "health", "--dry-run", "--facts", SNAPSHOT, "--timeout", n], "USAGE ERROR")
        add(["slurm", "prolog", "--dry-run", "--facts", SNAPSHOT, "--tier-budget", n],
            "USAGE ERROR", 0)  # fmt: skip
    for mode, code in [("health", 2), ("epilog", 0)]:  # a hook never drains for its own typo
        add(["slurm", mode, "--dir", "a-file", "--dry-run", "--facts", SNAPSHOT], "--dir a-file",
            code)  # fmt: skip
    add(["slurm", "epilog", "--dry-run", "--facts", "binary.json"], "binary.json")
    add(["slurm", "nosuch"], "invalid choice")
    # k8s
    for n in NUMBERS:
        add(["k8s", "mark", "--offline", "--timeout", n], "--timeout")
        add(["k8s", "mark", "--offline", "--tier-budget", n], "--tier-budget")
    for name in [*FILES, "array.json"]:
        add(["k8s", "mark", "--offline", "--certificate", name], name)
    add(["k8s", "mark", "--offline", "--dir", "a-file", "--facts", "missing.json"], "--dir")
    add(["k8s"], "MODE")
    # an empty value, as an unset variable in a script gives it
    for argv in [["facts", "-o", ""], ["report", CERT, "-o", ""], ["report", CERT, "--output="],
                 ["history", "--history", ""], ["fit", "--model", "llama-2-7b", "--gpus", ""],
                 ["k8s", "mark", "--offline", "--node", ""], ["diff", CERT, CERT, "--noise="],
                 ["verify", CERT, "--nonce", "", "--key", "x"]]:  # fmt: skip
        add(argv, "an empty value")
    # the settings
    for where in ["missing", "a-file", "folder"]:
        env = {"RIGCHECK_EXPECTED_DIR": where}
        add(["detect", "--facts", SNAPSHOT], "RIGCHECK_EXPECTED_DIR", env=env)
        add(["fit", "--model", "llama-2-7b", "--device", "h100"], "RIGCHECK_EXPECTED_DIR", env=env)
    add(["history"], "history store", env={"RIGCHECK_HISTORY": "sqlite:///folder"})
    add(["history"], "history store", env={"RIGCHECK_HISTORY": "garbage"})
    # the hooks' own settings wrong: slurmd drains for a Prolog or Epilog that exits non-zero,
    # so they say it loudly and exit 0 (docs/slurm: a typo never drains the cluster)
    for mode, code in [("epilog", 0), ("prolog", 0), ("health", 2)]:
        add(["slurm", mode, "--dry-run", "--facts", SNAPSHOT], "a-file", code=code,
            env={"RIGCHECK_GATE_DIR": "a-file"})  # fmt: skip
    return c


CASES = cases()


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory) -> Path:
    """A folder of bad files (tests/hostile/test_hostile_input.py's), made once: no case may
    change one (each test checks the one-byte file)."""
    folder = write_bad_files(tmp_path_factory.mktemp("hostile"))
    shutil.copy(CERTIFICATE, folder / CERT)
    return folder


@pytest.fixture
def bad(bad_files, monkeypatch):
    """The test's working folder; a campaign that passed its checks would become another
    process: it must not get that far."""
    monkeypatch.chdir(bad_files)
    (bad_files / "a-file").write_text("x")  # one byte: SQLite took it for an empty store
    monkeypatch.setattr(os, "execv", lambda *a: pytest.fail(f"the campaign started: {a[1]}"))
    return bad_files


@pytest.mark.parametrize(
    ("env", "argv", "code", "word"),
    CASES,
    ids=[" ".join([*(f"{k}={v}" for k, v in e.items()), *a]) for e, a, _, _ in CASES],
)
def test_each_mistake_is_one_line_and_its_code(env, argv, code, word, bad, monkeypatch, capsys):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("RIGCHECK_GATE_DIR", env.get("RIGCHECK_GATE_DIR", str(bad / "gate")))
    got, err = run_cli(argv, capsys)
    assert_one_clean_line(err, got, code)
    gate_log = bad / "gate" / "gate.log"
    said = err + (gate_log.read_text() if gate_log.exists() else "")
    assert word in said, said
    assert (bad / "a-file").read_text() == "x"  # nothing written over a file that was there
