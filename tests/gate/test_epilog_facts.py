"""The epilog reads the machine's facts in a child with a hard timeout (rigcheck/gate/
epilog_facts.py): a job that leaves a GPU wedged, so that an NVML call never returns, must end
the epilog with a drain that says so, not hang slurmd's Epilog with the node in service."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import ClassVar

from rigcheck.cli import main
from rigcheck.gate import slurm_cli
from rigcheck.gate.epilog_facts import facts_in_child
from rigcheck.gate.slurm import NodeState

REPO = Path(__file__).resolve().parents[2]
HEALTHY = REPO / "fixtures" / "snapshots" / "h100.json"


def child(code: str) -> tuple[str, ...]:
    """A stand-in for `python -m rigcheck facts -o`: the output path is its last argument."""
    return (sys.executable, "-c", f"import sys, time, shutil\n{code}")


def test_a_child_that_hangs_is_killed_at_the_timeout_and_named():
    started = time.monotonic()
    facts, unread = facts_in_child(0.5, child("time.sleep(30)"))
    assert time.monotonic() - started < 10
    assert facts is None
    assert unread.key == "facts_unread"
    assert "not read within 0.5 s (killed)" in unread.detail


def test_a_child_that_fails_is_named_with_its_exit_code_and_last_line():
    code = "print('NVMLError_Unknown: GPU 3', file=sys.stderr); sys.exit(3)"
    facts, unread = facts_in_child(10, child(code))
    assert facts is None
    assert unread.line == "facts_unread: `rigcheck facts` exited 3: NVMLError_Unknown: GPU 3"


def test_a_child_that_writes_its_snapshot_gives_the_facts():
    facts, unread = facts_in_child(30, child(f"shutil.copy({str(HEALTHY)!r}, sys.argv[-1])"))
    assert unread is None
    assert facts == json.loads(HEALTHY.read_text())


class DrainingSlurm:
    applied: ClassVar[list] = []

    def node(self, name):
        return NodeState(name, "idle", "none")

    def other_jobs(self, node, job):
        return []

    def apply(self, node, action):
        DrainingSlurm.applied.append((node, action.kind, action.reason))


def test_an_epilog_whose_facts_hang_drains_the_node_saying_why(tmp_path, monkeypatch, capsys):
    DrainingSlurm.applied = []
    monkeypatch.setattr(slurm_cli, "Scontrol", DrainingSlurm)
    monkeypatch.delenv("RIGCHECK_GATE_FACTS", raising=False)
    monkeypatch.setenv("SLURM_JOB_ID", "7")
    monkeypatch.setenv("SLURM_JOB_GPUS", "0")
    hang = child("time.sleep(30)")
    monkeypatch.setattr("rigcheck.gate.epilog_facts.COMMAND", hang)
    code = main(["slurm", "epilog", "--dir", str(tmp_path), "--node", "n1", "--timeout", "0.5"])
    assert code == 0  # a failing Epilog would make slurmd drain over rigcheck's reason
    ((node, kind, reason),) = DrainingSlurm.applied
    assert (node, kind) == ("n1", "drain")
    assert reason.startswith("rigcheck: facts_unread: the machine's facts were not read within 0.5")
    assert "facts_unread" in capsys.readouterr().err
