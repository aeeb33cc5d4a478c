"""Numbers a person types are read in the digits 0-9 only (rigcheck/number_text.py): Python's
int() and float() also read '１０' (full-width), '٣' (Arabic-Indic) and '1_000', and
str.isdigit() is true for '²', which int() then refused with a traceback. Each surface refuses
them with its own one line naming the setting and its documented code; a Slurm hook still
exits 0 (its typo drains no node).

What the old code did (2026-11-29): `slurm prolog --tier-budget １０` ran the quick tier on a
10 s budget, and `--tier-budget ٣` on a 3 s one, which ran out: the prolog tried to drain the
node; `fit --gpus ١` planned for 1 GPU; `--vllm-version ٠.٣٠` was echoed as given;
$RIGCHECK_HISTORY_KEEP_PASSES=² and `history --last ²` were tracebacks (int('²'));
`--burn-in=５m` and RIGCHECK_XID_WINDOW=２h were durations. JSON numbers are ASCII by grammar.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rigcheck.facts.kernel_log.reader import parse_window
from rigcheck.memory.cli import parse_count
from rigcheck.number_text import int_option, plain_float
from rigcheck.rdma.nccl_ib import gdr_level, tc_problems
from tests.hostile.test_hostile_input import assert_one_clean_line, run_cli

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = str(ROOT / "fixtures" / "snapshots" / "cpu.json")
CERT = str(ROOT / "fixtures" / "certificates" / "h100-node-before.json")
DIGITS = ["１０", "٣", "²", "1_000"]  # full-width, Arabic-Indic, superscript, grouped
FIT = ["fit", "--model", "llama-2-7b", "--device", "h100"]

# (argv with N for the number, exit code, a word the line holds, the digits tried there); a
# Prolog exits 0 on a typo. Every surface reads through the same helper: each kind of digit is
# tried on a few of them, and on those where the old code failed in its own way.
SURFACES = [
    (["slurm", "prolog", "--dry-run", "--facts", SNAPSHOT, "--tier-budget", "N"], 0,
     "--tier-budget", ["１０", "٣"]),
    (["slurm", "health", "--dry-run", "--facts", SNAPSHOT, "--timeout", "N"], 2, "--timeout",
     ["1_000"]),
    (["k8s", "mark", "--offline", "--tier-budget", "N"], 2, "--tier-budget", ["٣"]),
    (["blame", ".", "--timeout", "N"], 2, "--timeout", ["１０"]),
    (["history", "--history", "sqlite:///h.db", "--last", "N"], 2, "--last", ["²", "１０"]),
    (["diff", CERT, CERT, "--noise", "N%"], 2, "--noise", ["٣"]),
    (["fleet", "--band", "N%", CERT], 2, "--band", ["１０"]),
    (["coverage", "--class", "h100", "--healthy", "N"], 2, "--healthy", ["1_000"]),
    ([*FIT, "--gpus", "N"], 2, "--gpus", ["٣", "1_000"]),
    ([*FIT, "--batch", "N"], 2, "--batch", ["１０"]),
    (["fit", "--model", "llama-2-7b", "--vram", "NGiB"], 2, "--vram", ["٣"]),
    ([*FIT, "--vllm-version", "0.N"], 2, "--vllm-version", ["٣٠"]),  # 0.30: a known version
    ([*FIT, "--tokens", "N"], 2, "--tokens", ["1_000"]),
]  # fmt: skip
CASES = [(argv, code, word, n) for argv, code, word, tried in SURFACES for n in tried]


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RIGCHECK_GATE_DIR", str(tmp_path / "gate"))
    monkeypatch.setattr(os, "execv", lambda *a: pytest.fail(f"the campaign started: {a[1]}"))
    return tmp_path


@pytest.mark.parametrize(
    ("argv", "code", "word", "digits"), CASES, ids=[f"{c[2]} {c[3]}" for c in CASES]
)
def test_a_number_not_in_the_digits_0_to_9_is_refused(argv, code, word, digits, here, capsys):
    got, err = run_cli([a.replace("N", digits) if "N" in a else a for a in argv], capsys)
    gate_log = here / "gate" / "gate.log"
    said = err + (gate_log.read_text() if gate_log.exists() else "")
    assert_one_clean_line(err, got, code)
    assert word in said and digits in said, said
    if argv[0] == "slurm":  # the hook's typo is said loudly, and no quick tier ran
        assert "USAGE ERROR" in said and not list(here.glob("gate/*-*"))


@pytest.mark.parametrize("digits", DIGITS)
def test_the_settings_read_from_the_environment_refuse_them(digits, here, monkeypatch, capsys):
    monkeypatch.setenv("RIGCHECK_HISTORY_KEEP_PASSES", digits)
    prune = ["history", "prune", "--older-than", "1d", "--history", "sqlite:///h.db"]
    got, err = run_cli(prune, capsys)
    assert_one_clean_line(err, got, 2)
    assert "RIGCHECK_HISTORY_KEEP_PASSES" in err
    with pytest.raises(ValueError, match="Xid window"):
        parse_window(f"{digits}h")  # $RIGCHECK_XID_WINDOW


@pytest.mark.parametrize("args", [["--gpus", "١"], ["--burn-in=５m"], ["--tier-budget", "1_000"]])
def test_the_pytest_options_refuse_them(args, pytester):
    """Parsed as pytest reads the command line (argparse: a usage error, exit 4)."""
    with pytest.raises(pytest.UsageError, match=args[-1].split("=")[-1]):
        pytester.parseconfigure("-p", "rigcheck.plugin", "-m", "cpu", *args)


@pytest.mark.parametrize("digits", ["１", "²", "٣"])
def test_a_machines_nccl_settings_in_other_digits_are_not_read(digits):
    """NCCL reads its settings with strtol (0-9): NCCL_IB_TC=１ is no traffic class to it, and
    '²' was a ValueError traceback inside the check."""
    assert tc_problems({"NCCL_IB_TC": digits}, {}) == [
        f"NCCL_IB_TC={digits} is not a traffic class (0-255)"
    ]
    with pytest.raises(ValueError, match="NCCL_NET_GDR_LEVEL"):
        gdr_level(digits)


def test_plain_numbers_and_the_params_grouping_are_still_read():
    assert (int_option("10"), plain_float(" 2.5e3 "), parse_window("2h")) == (10, 2500.0, 7200)
    assert parse_count("7_000_000_000") == 7_000_000_000  # grouping, as Python writes it
