"""Issue 38: the gate's inputs are checked before anything is judged, and a mistake in the
gate's own settings never drains a node nor escapes its folder.

Before: `--tier-budget nan` / `inf` made every check fail and the node drain; `--timeout 0` /
`-1` was accepted (the quick tier killed at once: incomplete, drained); `--timeout nan` was a
traceback; a garbage RIGCHECK_TIER_BUDGET in rigcheck.env made the Prolog exit 2 (argparse),
which slurmd answers with a drain; SLURM_JOB_ID=../../x wrote the baseline outside --dir; a
truncated baseline was a JSONDecodeError traceback; a SLURM_JOB_GPUS naming no GPU of the node
made an empty scope that skipped a process the job left on its GPU.
"""

from __future__ import annotations

import argparse
import copy
import json
from pathlib import Path

import pytest

from rigcheck.cli import main
from rigcheck.gate import slurm_cli
from rigcheck.gate.deadline import Deadline
from rigcheck.gate.epilog import unknown_gpus
from rigcheck.gate.tiers import seconds
from rigcheck.plugin import gate as gate_plugin

REPO = Path(__file__).resolve().parents[2]
HEALTHY = REPO / "fixtures" / "snapshots" / "h100.json"
BAD_TIMES = ["nan", "inf", "-inf", "0", "-1", "ten", ""]


@pytest.mark.parametrize("text", BAD_TIMES)
def test_a_time_that_is_not_a_positive_finite_number_is_refused(text):
    with pytest.raises(argparse.ArgumentTypeError, match="finite number of seconds above 0"):
        seconds(text)


def test_a_positive_time_is_taken():
    assert seconds("2.5") == 2.5 and seconds("600") == 600


class NoSlurm:
    def __init__(self):
        raise AssertionError("a usage error must not reach Slurm")


@pytest.fixture
def gate_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("RIGCHECK_GATE_DIR", str(tmp_path))
    monkeypatch.setenv("SLURMD_NODENAME", "n1")
    monkeypatch.setattr(slurm_cli, "Scontrol", NoSlurm)
    monkeypatch.setattr(slurm_cli, "run_quick_tier", NoSlurm)
    return tmp_path


@pytest.mark.parametrize(
    ("mode", "args", "code"),
    [
        ("prolog", ["--tier-budget=nan"], 0),  # what rigcheck-gate.sh passes from rigcheck.env
        ("prolog", ["--tier-budget=ten"], 0),
        ("prolog", ["--timeout", "0"], 0),
        ("prolog", ["--timeout=-1"], 0),
        ("epilog", ["--timeout", "nan"], 0),
        ("health", ["--tier-budget=inf"], 2),
    ],
)
def test_a_bad_setting_drains_nothing_and_is_logged_loudly(gate_dir, capsys, mode, args, code):
    with pytest.raises(SystemExit) as exited:
        main(["slurm", mode, *args])
    assert exited.value.code == code
    err = capsys.readouterr().err
    assert f"rigcheck slurm {mode}: node n1: USAGE ERROR, no verdict, node state not changed" in err
    assert "Traceback" not in err
    assert "USAGE ERROR" in (gate_dir / "gate.log").read_text()


def test_the_pytest_option_refuses_nan_as_a_budget():
    option = {o.dest: o for o in _gate_options()}["tier_budget"]
    with pytest.raises(argparse.ArgumentTypeError):
        option.type("nan")


def _gate_options():
    class Group:
        def __init__(self):
            self.options = []

        def addoption(self, *names, **kw):
            self.options.append(
                argparse.Namespace(dest=names[0].lstrip("-").replace("-", "_"), **kw)
            )

    group = Group()
    gate_plugin.pytest_addoption(argparse.Namespace(getgroup=lambda *a: group))
    return group.options


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_the_budget_counts_from_the_first_check_not_the_process():
    clock = FakeClock()
    deadline = Deadline(10, "tier quick", clock=clock)
    clock.now += 11  # imports and collection on a host at load 11
    config = argparse.Namespace(stash={gate_plugin.DEADLINE_KEY: deadline})
    gate_plugin.pytest_runtestloop(argparse.Namespace(config=config))
    assert deadline.remaining_s() == pytest.approx(10)


# -- the epilog ---------------------------------------------------------------------------------


class Quiet:
    """A node alone on its job, whose state is never changed (nothing found)."""

    def other_jobs(self, node, job):
        return []

    def node(self, name):  # pragma: no cover - only asked when there is a cause
        raise AssertionError(name)


UUID_3 = "GPU-66666666-7777-8888-9999-000000000000"


def held(gpu: int) -> dict:
    """A node with GPUs 0 and 3 (the synthetic h100 snapshot's board twice), a process left
    on GPU `gpu`."""
    facts = json.loads(HEALTHY.read_text())
    board = facts["devices"][0]
    facts["devices"] = [
        {**copy.deepcopy(board), "index": i, "uuid": UUID_3 if i == 3 else board["uuid"]}
        for i in (0, 3)
    ]
    for device in facts["devices"]:
        device["processes"] = [{"pid": 4242}] if device["index"] == gpu else []
    return facts


@pytest.fixture
def epilog(tmp_path, monkeypatch):
    monkeypatch.setattr(slurm_cli, "Scontrol", Quiet)
    for name in ("SLURM_JOB_GPUS", "CUDA_VISIBLE_DEVICES", "SLURM_JOB_ID"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


@pytest.mark.parametrize("job", ["../../x", "41/../../../etc/y", "4 2", "-1"])
def test_a_job_id_that_is_not_digits_never_names_a_path(epilog, monkeypatch, job):
    monkeypatch.setenv("SLURM_JOB_ID", job)
    with pytest.raises(slurm_cli.BaselineError, match="is not a Slurm job id"):
        slurm_cli._baseline_path(epilog)
    slurm_cli._save_baseline(epilog, "prolog", "n1", {"devices": []})
    assert not list(epilog.parent.rglob("*.facts.json")) and not (epilog.parent / "x").exists()
    assert "ERROR: SLURM_JOB_ID=" in (epilog / "gate.log").read_text()


def test_a_truncated_baseline_is_said_not_a_traceback(epilog, monkeypatch, capsys):
    monkeypatch.setenv("SLURM_JOB_ID", "41")
    monkeypatch.setattr(
        slurm_cli, "_facts_now", lambda args: (json.loads(HEALTHY.read_text()), None)
    )
    (epilog / "jobs").mkdir()
    (epilog / "jobs" / "41.facts.json").write_text(HEALTHY.read_text()[:5000])  # cut short
    assert main(["slurm", "epilog", "--dir", str(epilog), "--node", "n1", "--dry-run"]) == 0
    err = capsys.readouterr().err
    assert "ERROR: the prolog's facts" in err and "cannot be read (JSONDecodeError" in err
    assert not (epilog / "jobs" / "41.facts.json").exists()


@pytest.mark.parametrize(
    "env",
    [
        {"SLURM_JOB_GPUS": "garbage"},
        {"SLURM_JOB_GPUS": "3,17"},  # a node of GPUs 0 and 3 has no GPU 17
        {"CUDA_VISIBLE_DEVICES": "GPU-00000000-dead-beef-0000-000000000000"},
    ],
)
def test_gpus_that_are_not_on_the_node_are_an_error_and_the_left_process_is_found(
    epilog, monkeypatch, capsys, env
):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(slurm_cli, "_facts_now", lambda args: (held(3), None))
    drained = []
    monkeypatch.setattr(slurm_cli, "_act", lambda sc, node, cause, *a, **k: drained.append(cause)
                        or slurm_cli.Action("drain", cause, "would drain"))  # fmt: skip
    assert main(["slurm", "epilog", "--dir", str(epilog), "--node", "n1", "--dry-run"]) == 0
    err = capsys.readouterr().err
    name = next(iter(env))
    assert f"ERROR: {name}=" in err and "not on this node" in err
    assert drained and "GPU 3 still held by pid 4242" in drained[0]


def test_gpus_on_the_node_are_no_error():
    facts = held(3)
    assert unknown_gpus(frozenset({"0", UUID_3}), facts, {}) is None
    assert unknown_gpus(None, facts, {}) is None
