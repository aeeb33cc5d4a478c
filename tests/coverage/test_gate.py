"""CI's coverage gate: a small fixed-seed campaign on h100's quick tier must catch every cause at
least as often as the saved result (fixtures/coverage/h100-quick-gate.json), and fail no more
healthy nodes. A change that stops a check from reading a signature fails here, naming the cause.

After a change that rightly alters the result, save the new one with the command in GATE_RUN
plus `--json fixtures/coverage/h100-quick-gate.json`, and say why in the commit.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

from rigcheck.facts.amd import smi as amd_smi
from rigcheck.facts.nvidia import counters
from rigcheck.testing.coverage import campaign
from rigcheck.testing.coverage.campaign import Plan, run
from rigcheck.testing.coverage.gate import regressions

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


def test_a_probe_that_stops_reading_a_signature_fails_the_gate_naming_its_cause(
    monkeypatch, tmp_path
):
    """The mutant: the NVML probe no longer reads the driver's recovery action (the gap the
    campaign found, reopened). One faulty node of that signature, judged by the real suites,
    falls under the saved baseline, and the gate names the cause and the signature missed."""
    monkeypatch.setattr(counters, "_recovery_action", lambda nvml, h: "none")
    causes, signatures, sources = campaign.load_model("nvidia")
    faulty = next(c for c in causes if c.name == "faulty_gpu")
    only = dataclasses.replace(faulty, signatures=("recovery_action_pending",))
    monkeypatch.setattr(campaign, "load_model", lambda family: ((only,), signatures, sources))
    result = run(Plan("h100", "quick", seed=0, healthy=0, per_signature=1), tmp_path)
    baseline = json.loads(BASELINE.read_text())
    baseline["plan"] = result["plan"]  # the gate compares cause by cause: this one cause
    (found,) = regressions(baseline, result)
    assert found.startswith("Faulty GPU (incl. NVLink): caught 0/1, was 7/7")
    assert found.endswith("(missed: recovery_action_pending)")


def test_the_gap_the_campaign_found_on_mi300x_is_caught_now_and_was_missed_before(
    monkeypatch, tmp_path
):
    """An MI300X held at its power limit while idle (amdsmi's violation status, the signature
    no check read): caught by test_amd_no_violation_at_idle; with the probe as it was before
    (no violation fact), the same node passes every check. One node, judged twice."""
    causes, signatures, sources = campaign.load_model("amd")
    power = next(c for c in causes if c.name == "power_supply")
    only = dataclasses.replace(power, signatures=("amd_power_violation",))
    monkeypatch.setattr(campaign, "load_model", lambda family: ((only,), signatures, sources))
    plan = Plan("mi300x", "quick", seed=0, healthy=0, per_signature=1)
    (now,) = run(plan, tmp_path / "now")["causes"]
    assert (now["caught"], now["checks"]) == (1, {"test_amd_no_violation_at_idle": 1})
    monkeypatch.setattr(amd_smi, "_violation", lambda smi, h: None)  # the probe before the fix
    (before,) = run(plan, tmp_path / "before")["causes"]
    assert (before["runs"], before["caught"], before["missed"]) == (1, 0, ["amd_power_violation"])
