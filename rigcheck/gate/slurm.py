"""Slurm's side of the gate: read a node's state, drain it with rigcheck's reason, resume it
only when that reason is rigcheck's own.

The decision (`decide`) is a pure function of the node's state and the run's root-cause line;
`Scontrol` runs sinfo and scontrol through one injected runner, with argument lists and a
timeout (no shell), so tests drive it against a real cluster or a recorded answer alike.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rigcheck.errors import RigcheckError

PREFIX = "rigcheck: "  # a drain reason rigcheck wrote; any other is someone else's
COMMAND_TIMEOUT_S = 15  # sinfo and scontrol answer in well under a second on a live controller
DRAIN, RESUME, NOTHING = "drain", "resume", "nothing"

Runner = Callable[[Sequence[str], float], subprocess.CompletedProcess]


class SlurmError(RigcheckError):
    """sinfo or scontrol failed, or the node is not in the cluster."""


@dataclass(frozen=True)
class NodeState:
    name: str
    state: str  # sinfo's %T: idle, mixed, allocated, draining, drained, down, ... (maybe + '*')
    reason: str  # sinfo's %E: the drain or down reason, "none" when there is none

    @property
    def drained(self) -> bool:
        """Drained or draining: no new job is started on the node."""
        return self.state.rstrip("*~#$@^-!%").startswith(("drain", "drng"))

    @property
    def drained_by_rigcheck(self) -> bool:
        return self.drained and self.reason.startswith(PREFIX)


@dataclass(frozen=True)
class Action:
    kind: str  # DRAIN, RESUME or NOTHING
    reason: str | None  # the drain reason written (DRAIN only)
    why: str  # one line for the log


def drain_reason(root_cause: str) -> str:
    return PREFIX + root_cause


def decide(node: NodeState, root_cause: str | None) -> Action:
    """What to do with the node after a run whose root-cause line is `root_cause` (None: it
    passed). Never resumes or overwrites a drain that rigcheck did not make."""
    if root_cause is None:
        if node.drained_by_rigcheck:
            return Action(RESUME, None, f"resumed: passed, was drained by rigcheck ({node.reason})")
        if node.drained:
            why = f"left drained: passed, but drained by someone else ({node.reason})"
            return Action(NOTHING, None, why + "; rigcheck resumes only its own drains")
        return Action(NOTHING, None, "nothing to do: passed")
    reason = drain_reason(root_cause)
    if node.drained and not node.drained_by_rigcheck:
        return Action(
            NOTHING,
            None,
            f"left as is: already drained by someone else "
            f"({node.reason}); not overwriting their reason",
        )
    if node.drained and node.reason == reason:
        return Action(NOTHING, None, "already drained by rigcheck for the same reason")
    return Action(DRAIN, reason, f"drained: {reason}")


def run_command(argv: Sequence[str], timeout_s: float) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout_s)


class Scontrol:
    """sinfo and scontrol for one node."""

    def __init__(self, run: Runner = run_command) -> None:
        self.run = run

    def _call(self, argv: list[str]) -> str:
        try:
            done = self.run(argv, COMMAND_TIMEOUT_S)
        except FileNotFoundError:
            raise SlurmError(f"{argv[0]} not found: run this on a Slurm node (PATH)") from None
        except subprocess.TimeoutExpired:
            raise SlurmError(
                f"`{' '.join(argv[:3])} ...` did not answer in {COMMAND_TIMEOUT_S} s: "
                "is slurmctld up? (scontrol ping)"
            ) from None
        if done.returncode != 0:
            said = (done.stderr or done.stdout).strip() or f"exit {done.returncode}"
            raise SlurmError(f"`{' '.join(argv[:3])} ...` failed: {said}")
        return done.stdout

    def node(self, name: str) -> NodeState:
        out = self._call(["sinfo", "--noheader", "--Node", f"--nodes={name}", "--format=%N|%T|%E"])
        for line in out.splitlines():
            node, _, rest = line.partition("|")
            state, _, reason = rest.partition("|")
            if node.strip() == name:
                return NodeState(name, state.strip().lower(), reason.strip())
        raise SlurmError(f"node {name!r} is not in this cluster (sinfo --Node lists it not)")

    def other_jobs(self, node: str, job: str | None) -> list[str]:
        """Ids of the jobs other than `job` running (or ending) on the node."""
        out = self._call(["squeue", "--noheader", f"--nodelist={node}",
                          "--states=RUNNING,SUSPENDED,COMPLETING", "--format=%A"])  # fmt: skip
        return [j for j in (line.strip() for line in out.splitlines()) if j and j != job]

    def apply(self, node: str, action: Action) -> None:
        if action.kind == DRAIN:
            self._call(
                ["scontrol", "update", f"NodeName={node}", "State=DRAIN", f"Reason={action.reason}"]
            )
        elif action.kind == RESUME:
            self._call(["scontrol", "update", f"NodeName={node}", "State=RESUME"])
