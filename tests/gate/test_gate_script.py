"""docs/slurm/rigcheck-gate.sh as slurmd runs it (no arguments), with a stand-in Python that
prints what it was given: the mode from SLURM_SCRIPT_CONTEXT, the settings from rigcheck.env
(written as docs/slurm/README.md shows it, without `export`) reaching rigcheck's own process."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "docs" / "slurm" / "rigcheck-gate.sh"
STAND_IN = """#!/bin/sh
echo "argv: $*"
echo "gate_dir: ${RIGCHECK_GATE_DIR:-unset}"
echo "facts: ${RIGCHECK_GATE_FACTS:-unset}"
"""


def run_gate(tmp_path: Path, context: str | None, env_lines: list[str]) -> str:
    shutil.copy(SCRIPT, tmp_path / "rigcheck-gate.sh")
    python = tmp_path / "python"
    python.write_text(STAND_IN)
    python.chmod(0o755)
    lines = [f"RIGCHECK_PYTHON={python}", *env_lines]
    (tmp_path / "rigcheck.env").write_text("\n".join(lines) + "\n")
    env = {"PATH": os.environ["PATH"]}
    if context:
        env["SLURM_SCRIPT_CONTEXT"] = context
    done = subprocess.run(
        ["sh", str(tmp_path / "rigcheck-gate.sh")], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_rigcheck_env_reaches_rigcheck_without_export(tmp_path):
    out = run_gate(tmp_path, None, ["RIGCHECK_GATE_DIR=/srv/gate", "RIGCHECK_GATE_FACTS=/x.json"])
    assert "gate_dir: /srv/gate" in out and "facts: /x.json" in out


@pytest.mark.parametrize(
    ("context", "env_lines", "argv"),
    [
        (None, [], "argv: -m rigcheck slurm health"),
        ("prolog_slurmd", ["RIGCHECK_CLASS=h100"], "argv: -m rigcheck slurm prolog h100"),
        ("epilog_slurmd", ["RIGCHECK_CLASS=h100"], "argv: -m rigcheck slurm epilog"),
        (None, ["RIGCHECK_TIER_BUDGET=25"], "argv: -m rigcheck slurm health --tier-budget=25"),
    ],
)
def test_mode_and_arguments_from_slurm_and_rigcheck_env(tmp_path, context, env_lines, argv):
    assert argv + "\n" in run_gate(tmp_path, context, env_lines)
