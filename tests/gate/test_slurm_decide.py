"""The Slurm gate's decision and its sinfo/scontrol calls, without a cluster (the live cluster
is tests/slurm/test_gate_on_slurm.py): never resume or overwrite someone else's drain."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rigcheck.gate.slurm import (
    COMMAND_TIMEOUT_S,
    DRAIN,
    NOTHING,
    RESUME,
    Action,
    NodeState,
    Scontrol,
    SlurmError,
    decide,
    run_command,
)

CAUSE = "ecc_zero: GPU 3: 2 uncorrected ECC errors"


def node(state: str = "idle", reason: str = "none") -> NodeState:
    return NodeState("gpu7", state, reason)


def test_a_failure_drains_with_rigchecks_reason():
    action = decide(node(), CAUSE)
    assert action == Action(DRAIN, f"rigcheck: {CAUSE}", f"drained: rigcheck: {CAUSE}")


@pytest.mark.parametrize("state", ["idle", "mixed", "allocated", "idle*", "down"])
def test_a_node_that_is_not_drained_is_drained_on_failure(state):
    assert decide(node(state), CAUSE).kind == DRAIN


def test_someone_elses_drain_is_never_overwritten_or_resumed():
    admin = node("drained", "replacing PSU 2")
    assert decide(admin, CAUSE) == Action(
        NOTHING, None,
        "left as is: already drained by someone else (replacing PSU 2); "
        "not overwriting their reason",
    )  # fmt: skip
    assert decide(admin, None) == Action(
        NOTHING, None,
        "left drained: passed, but drained by someone else (replacing PSU 2); "
        "rigcheck resumes only its own drains",
    )  # fmt: skip
    assert decide(node("draining", "Prolog error"), None).kind == NOTHING


def test_rigchecks_own_drain_is_resumed_on_a_pass_and_renewed_on_a_new_cause():
    ours = node("drained", "rigcheck: xid: Xid 79")
    assert decide(ours, None) == Action(
        RESUME, None, "resumed: passed, was drained by rigcheck (rigcheck: xid: Xid 79)"
    )
    assert decide(node("draining", "rigcheck: xid: Xid 79"), None).kind == RESUME
    assert decide(ours, CAUSE) == Action(DRAIN, f"rigcheck: {CAUSE}", f"drained: rigcheck: {CAUSE}")
    same = decide(node("drained", f"rigcheck: {CAUSE}"), CAUSE)
    assert same == Action(NOTHING, None, "already drained by rigcheck for the same reason")


def test_a_pass_on_a_healthy_node_does_nothing():
    assert decide(node(), None) == Action(NOTHING, None, "nothing to do: passed")
    # "rigcheck: " in the reason of a node that is not drained is no drain to resume.
    assert decide(node("idle", "rigcheck: old"), None).kind == NOTHING


@pytest.mark.parametrize(
    ("state", "drained"),
    [("drained", True), ("draining", True), ("drained*", True), ("drng", True),
     ("idle", False), ("down*", False), ("mixed", False), ("idle~", False)],
)  # fmt: skip
def test_drained_reads_sinfos_state_names(state, drained):
    assert node(state).drained is drained


class FakeSlurm:
    """Answers sinfo as a live controller does, and records the scontrol calls."""

    def __init__(self, sinfo_out: str = "", returncode: int = 0, raises=None) -> None:
        self.sinfo_out, self.returncode, self.raises = sinfo_out, returncode, raises
        self.calls: list[tuple[list[str], float]] = []

    def __call__(self, argv, timeout_s):
        self.calls.append((list(argv), timeout_s))
        if self.raises:
            raise self.raises
        out = self.sinfo_out if argv[0] == "sinfo" else ""
        return subprocess.CompletedProcess(argv, self.returncode, out, "slurm said no")


def test_the_node_is_read_from_sinfo_with_its_reason_whole():
    fake = FakeSlurm("gpu7|drained|rigcheck: ecc: 2 errors | more\n")
    assert Scontrol(fake).node("gpu7") == NodeState(
        "gpu7", "drained", "rigcheck: ecc: 2 errors | more"
    )
    argv, timeout = fake.calls[0]
    assert argv == ["sinfo", "--noheader", "--Node", "--nodes=gpu7", "--format=%N|%T|%E"]
    assert timeout == COMMAND_TIMEOUT_S


def test_a_node_sinfo_does_not_list_is_an_error():
    with pytest.raises(SlurmError, match="node 'gpu7' is not in this cluster"):
        Scontrol(FakeSlurm("gpu70|idle|none\n")).node("gpu7")


@pytest.mark.parametrize(
    ("action", "argv"),
    [
        (Action(DRAIN, "rigcheck: x: y z", "why"),
         ["scontrol", "update", "NodeName=gpu7", "State=DRAIN", "Reason=rigcheck: x: y z"]),
        (Action(RESUME, None, "why"), ["scontrol", "update", "NodeName=gpu7", "State=RESUME"]),
        (Action(NOTHING, None, "why"), None),
    ],
)  # fmt: skip
def test_drain_and_resume_are_scontrol_argument_lists(action, argv):
    fake = FakeSlurm()
    Scontrol(fake).apply("gpu7", action)
    assert [c[0] for c in fake.calls] == ([argv] if argv else [])


def test_the_default_runner_runs_an_argument_list_with_a_timeout():
    done = run_command([sys.executable, "-c", "import sys; print('out'); sys.exit(3)"], 30)
    assert (done.returncode, done.stdout) == (3, "out\n")
    with pytest.raises(subprocess.TimeoutExpired):
        run_command([sys.executable, "-c", "import time; time.sleep(5)"], 0.5)


@pytest.mark.parametrize(
    ("fake", "message"),
    [
        (FakeSlurm(returncode=1), "`sinfo --noheader --Node ...` failed: slurm said no"),
        (FakeSlurm(raises=FileNotFoundError()),
         "sinfo not found: run this on a Slurm node (PATH)"),
        (FakeSlurm(raises=subprocess.TimeoutExpired("sinfo", 15)),
         "`sinfo --noheader --Node ...` did not answer in 15 s: is slurmctld up? (scontrol ping)"),
    ],
)  # fmt: skip
def test_a_slurm_command_that_fails_says_what_to_do(fake, message):
    with pytest.raises(SlurmError) as raised:
        Scontrol(fake).node("gpu7")
    assert str(raised.value) == message
