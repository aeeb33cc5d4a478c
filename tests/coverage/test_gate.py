"""CI's coverage gate: a small fixed-seed campaign on h100's quick tier must catch every cause at
least as often as the saved result (fixtures/coverage/h100-quick-gate.json), and fail no more
healthy nodes. A change that stops a check from reading a signature fails here, naming the cause.

After a change that rightly alters the result, save the new one with the command in GATE_RUN
plus `--json fixtures/coverage/h100-quick-gate.json`, and say why in the commit.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BASELINE = REPO / "fixtures" / "coverage" / "h100-quick-gate.json"
GATE_RUN = [sys.executable, "-m", "rigcheck.testing.coverage", "--class", "h100",
            "--healthy", "2", "--per-signature", "1", "--seed", "0"]  # fmt: skip


def test_the_fixed_seed_campaign_catches_no_less_than_its_baseline(tmp_path):
    result = tmp_path / "result.json"
    done = subprocess.run(
        [*GATE_RUN, "--baseline", str(BASELINE), "--json", str(result)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    now = json.loads(result.read_text())
    assert now["healthy"]["runs"] == 2 and now["healthy"]["false_fails"] == 0
    caught = {row["name"]: row["caught"] for row in now["causes"]}
    assert caught["faulty_gpu"] >= 7, caught  # the signatures are injected, and caught


def test_the_baseline_is_the_gate_plan():
    baseline = json.loads(BASELINE.read_text())
    assert (baseline["class"], baseline["tier"], baseline["seed"]) == ("h100", "quick", 0)
    assert baseline["plan"] == {"healthy": 2, "per_signature": 1}
