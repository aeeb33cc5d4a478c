"""When sinfo, squeue or scontrol fail under `rigcheck slurm`: a node that passed (or whose job
left nothing) is left as it is and the script exits 0, since a non-zero Prolog or Epilog makes
slurmd drain the node ("Prolog error", "Epilog error") for a fault that is not the node's; a
node that failed exits 1, so slurmd drains it (fail closed) and gate.log names the root cause.
Also the epilog's squeue call, which says whether another job shares the node (issue 25)."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import ClassVar

import pytest

from rigcheck.cli import main
from rigcheck.gate import slurm_cli
from rigcheck.gate.quick_run import QuickRun
from rigcheck.gate.slurm import NodeState, Scontrol, SlurmError

REPO = Path(__file__).resolve().parents[2]
HEALTHY = REPO / "fixtures" / "snapshots" / "h100.json"
CAUSE = "no_machine_fault_xids: GPU 0: Xid 79"


class BrokenSlurm:
    """A controller that cannot be reached: every call fails as Scontrol says it does."""

    calls: ClassVar[list[str]] = []

    def node(self, name):
        BrokenSlurm.calls.append("sinfo")
        raise SlurmError("`sinfo --noheader --Node ...` did not answer in 15 s")

    def other_jobs(self, node, job):
        BrokenSlurm.calls.append("squeue")
        raise SlurmError("`squeue --noheader --nodelist=n1 ...` failed: timeout")

    def apply(self, node, action):  # pragma: no cover - node() fails first
        raise AssertionError("nothing may be applied after sinfo failed")


@pytest.fixture
def broken(monkeypatch):
    BrokenSlurm.calls = []
    monkeypatch.setattr(slurm_cli, "Scontrol", BrokenSlurm)
    monkeypatch.delenv("SLURM_JOB_GPUS", raising=False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setenv("SLURM_JOB_ID", "41")
    return BrokenSlurm


def quick_run(tmp_path: Path, cause: str | None) -> QuickRun:
    verdict = "pass" if cause is None else "fail"
    certificate = {"verdict": verdict, "root_cause": cause, "machine": {"devices": []}}
    return QuickRun(certificate, cause, None, tmp_path / "run")


@pytest.mark.parametrize("mode", ["health", "prolog"])
def test_a_pass_with_slurm_unreachable_exits_0_and_says_so(mode, broken, tmp_path, monkeypatch,
                                                           capsys):  # fmt: skip
    monkeypatch.setattr(slurm_cli, "run_quick_tier", lambda *a, **kw: quick_run(tmp_path, None))
    code = main(["slurm", mode, "h100", "--dir", str(tmp_path), "--node", "n1"])
    err = capsys.readouterr().err
    assert code == 0
    if mode == "health":
        assert (
            "rigcheck slurm health: node n1: verdict pass: node state not read or changed " in err
        )
        assert "did not answer in 15 s" in (tmp_path / "gate.log").read_text()
    else:  # squeue failed: maybe not alone, so judged as a busy node, whose pass resumes nothing
        assert (
            "rigcheck slurm prolog: node n1: verdict pass (busy node, squeue could not say: "
            "idle-only checks and kernels not judged): nothing to do" in err
        )
        assert broken.calls == ["squeue"]


@pytest.mark.parametrize("mode", ["health", "prolog"])
def test_a_failure_that_cannot_be_drained_exits_1(mode, broken, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(slurm_cli, "run_quick_tier", lambda *a, **kw: quick_run(tmp_path, CAUSE))
    code = main(["slurm", mode, "h100", "--dir", str(tmp_path), "--node", "n1"])
    err = capsys.readouterr().err
    assert code == 1
    assert f"could not drain for `{CAUSE}` (`sinfo" in err
    assert "exit 1: slurmd drains the node itself" in err


def test_an_epilog_with_nothing_found_asks_slurm_nothing_more_and_exits_0(broken, tmp_path,
                                                                          capsys):  # fmt: skip
    code = main(["slurm", "epilog", "--dir", str(tmp_path), "--node", "n1",
                 "--facts", str(HEALTHY)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0
    assert broken.calls == ["squeue"]  # who shares the node; no sinfo: nothing to drain
    assert "GPU processes not judged: the job's GPUs are unknown" in err
    assert err.rstrip().endswith(": nothing to do")


def test_an_epilog_that_found_a_fault_and_cannot_drain_exits_1(broken, tmp_path, capsys):
    facts = json.loads(HEALTHY.read_text())
    facts["devices"][0]["throttle_reasons"] = ["hw_slowdown"]
    path = tmp_path / "after.json"
    path.write_text(json.dumps(facts))
    code = main(["slurm", "epilog", "--dir", str(tmp_path), "--node", "n1", "--facts", str(path)])
    err = capsys.readouterr().err
    assert code == 1
    assert "could not drain for `job_left_throttle: GPU 0: hw_slowdown still active`" in err
    assert "exit 1: slurmd drains the node itself" in err


def test_an_epilog_with_the_jobs_gpus_does_not_ask_squeue(broken, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SLURM_JOB_GPUS", "0")
    facts = copy.deepcopy(json.loads(HEALTHY.read_text()))
    other = {**copy.deepcopy(facts["devices"][0]), "index": 3, "processes": [{"pid": 777}]}
    facts["devices"].append(other)  # GPU 3 holds another job's rank: not this job's leftover
    path = tmp_path / "after.json"
    path.write_text(json.dumps(facts))
    code = main(["slurm", "epilog", "--dir", str(tmp_path), "--node", "n1", "--facts", str(path)])
    err = capsys.readouterr().err
    assert code == 0 and broken.calls == []
    assert "deltas not judged; processes judged on the job's GPUs 0: nothing to do" in err


class FakeSqueue:
    def __init__(self, out: str, returncode: int = 0) -> None:
        self.out, self.returncode, self.calls = out, returncode, []

    def __call__(self, argv, timeout_s):
        self.calls.append(list(argv))
        return subprocess.CompletedProcess(argv, self.returncode, self.out, "squeue: error")


def test_other_jobs_on_the_node_come_from_squeue_without_this_one():
    fake = FakeSqueue("41\n 88\n\n91\n")
    assert Scontrol(fake).other_jobs("n1", "41") == ["88", "91"]
    assert fake.calls == [["squeue", "--noheader", "--nodelist=n1",
                           "--states=RUNNING,SUSPENDED,COMPLETING", "--format=%A"]]  # fmt: skip
    assert Scontrol(FakeSqueue("41\n")).other_jobs("n1", "41") == []
    assert Scontrol(FakeSqueue("41\n")).other_jobs("n1", None) == ["41"]
    with pytest.raises(SlurmError, match=r"squeue --noheader --nodelist=n1 \.\.\.` failed"):
        Scontrol(FakeSqueue("", returncode=1)).other_jobs("n1", "41")


def test_a_healthy_pass_still_reads_the_node_to_resume_rigchecks_drain(tmp_path, monkeypatch):
    applied = []

    class Drained:
        def node(self, name):
            return NodeState(name, "drained", "rigcheck: old cause")

        def apply(self, node, action):
            applied.append(action.kind)

    monkeypatch.setattr(slurm_cli, "Scontrol", Drained)
    monkeypatch.setattr(slurm_cli, "run_quick_tier", lambda *a, **kw: quick_run(tmp_path, None))
    assert main(["slurm", "health", "h100", "--dir", str(tmp_path), "--node", "n1"]) == 0
    assert applied == ["resume"]


@pytest.mark.parametrize(
    ("others", "busy", "said"),
    [
        ([], False, "verdict pass: nothing to do: passed"),
        (["88"], True, "verdict pass (busy node, job(s) 88 also here: idle-only checks and "
                       "kernels not judged): nothing to do ("),
    ],
)  # fmt: skip
def test_a_prolog_on_a_node_shared_with_another_job_runs_the_busy_quick_tier(
    others, busy, said, tmp_path, monkeypatch, capsys
):
    asked, read = [], []

    class Shared:
        def other_jobs(self, node, job):
            return others

        def node(self, name):
            read.append(name)
            return NodeState(name, "mixed", "none")

        def apply(self, node, action):
            assert action.kind == "nothing"

    monkeypatch.setenv("SLURM_JOB_ID", "41")
    monkeypatch.setattr(slurm_cli, "Scontrol", Shared)
    monkeypatch.setattr(
        slurm_cli, "run_quick_tier", lambda *a, **kw: asked.append(kw) or quick_run(tmp_path, None)
    )
    assert main(["slurm", "prolog", "h100", "--dir", str(tmp_path), "--node", "n1"]) == 0
    assert [kw["busy"] for kw in asked] == [busy]
    assert said in capsys.readouterr().err
    assert read == ([] if busy else ["n1"])  # a busy pass resumes nothing: no need to read
