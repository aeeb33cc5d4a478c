"""The Slurm health gate on a real single-host cluster (slurm_cluster.py), started once for all
of it: docs/slurm/rigcheck-gate.sh as slurmd's Prolog and Epilog, and as the HealthCheckProgram
(run here as slurmd would run it: the same script, no arguments, but started by the test rather
than on slurmd's HealthCheckInterval). The node's "hardware" is a recorded snapshot that the
script is pointed at (RIGCHECK_GATE_FACTS): the synthetic h100 one (fixtures/snapshots), healthy,
and a copy with Xid 79 in its kernel log as fixtures/broken_variants.json's
xid_79_fallen_off_bus writes it.

Shown: a node whose check fails is drained with rigcheck's reason, a repaired one resumed, a node
an administrator drained left alone, and the epilog catching a fault that appeared during a job.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import slurm_cluster

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "docs" / "slurm" / "rigcheck-gate.sh"
HEALTHY = REPO / "fixtures" / "snapshots" / "h100.json"
XID_79 = {
    "t_s": 3600.5,
    "bus_id": "0000:18:00.0",
    "code": 79,
    "pid": None,
    "text": "GPU has fallen off the bus.",
}  # fmt: skip  (broken_variants.json's event)


@pytest.fixture(scope="module")
def gate():
    """One cluster with the gate script as Prolog and Epilog, and the snapshots it reads."""
    slurm_cluster.require_slurm()
    root = Path(tempfile.mkdtemp(prefix="rigcheck-gate-"))
    gate = Gate(root)
    cluster = slurm_cluster.SlurmCluster(
        root,
        extra_conf=(
            f"Prolog={gate.script}",
            f"Epilog={gate.script}",
            # Two jobs on one node at once, as on a GPU node shared by jobs (issue 25).
            # Memory is not a consumable, so two jobs fit the node's one CPU (FORCE:2).
            "SelectTypeParameters=CR_Core",
            "PartitionName=shared Nodes=ALL OverSubscribe=FORCE:2 MaxTime=INFINITE State=UP",
        ),
    )
    gate.cluster = cluster
    gate.write_env(cluster)
    try:
        cluster.start()
        yield gate
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


class Gate:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.script = root / "bin" / SCRIPT.name  # rigcheck.env beside it, as the docs say
        self.script.parent.mkdir()
        shutil.copy2(SCRIPT, self.script)
        self.dir = root / "gate"
        self.current = root / "current.json"  # what the "hardware" reads now
        self.faulty = root / "xid79.json"
        data = json.loads(HEALTHY.read_text())
        data["kernel_log"].update(xid_events=[XID_79], xid_count=1)
        self.faulty.write_text(json.dumps(data))
        self.held = root / "held.json"  # a process holds GPU 0: pid 4242, 2 GiB
        data = json.loads(HEALTHY.read_text())
        data["devices"][0]["processes"] = [{"pid": 4242, "used_bytes": 2 * 2**30}]
        self.held.write_text(json.dumps(data))
        self.repair()

    def write_env(self, cluster: slurm_cluster.SlurmCluster) -> None:
        lines = {
            "RIGCHECK_PYTHON": sys.executable,
            "RIGCHECK_CLASS": "h100",
            "RIGCHECK_GATE_DIR": str(self.dir),
            "RIGCHECK_GATE_FACTS": str(self.current),
            "SLURM_CONF": str(cluster.conf),
            "PATH": slurm_cluster.SBIN_PATH,
            # slurmd's children do not inherit tests/conftest.py's RIGCHECK_HISTORY=none: without
            # it every gate run here was kept in the real ~/.local/share/rigcheck/history.db.
            "RIGCHECK_HISTORY": "none",
        }
        text = "".join(f"export {k}='{v}'\n" for k, v in lines.items())
        (self.script.parent / "rigcheck.env").write_text(text)

    def break_it(self) -> None:
        shutil.copyfile(self.faulty, self.current)

    def repair(self) -> None:
        shutil.copyfile(HEALTHY, self.current)

    def health(self, node: str) -> subprocess.CompletedProcess:
        """The HealthCheckProgram as slurmd starts it: the script, no arguments."""
        env = {**self.cluster.env, "SLURMD_NODENAME": node}
        return subprocess.run([str(self.script)], env=env, capture_output=True, text=True,
                              timeout=90)  # fmt: skip

    def node(self, node: str) -> tuple[str, str]:
        out = self.cluster.client("sinfo", "--noheader", "--Node", f"--nodes={node}",
                                  "--format=%T|%E")  # fmt: skip
        # A node in two partitions (ci, shared) is listed once per partition: the same state.
        state, _, reason = (out.strip().splitlines() or [""])[0].partition("|")
        return state, reason

    def log(self) -> str:
        path = self.dir / "gate.log"
        return path.read_text() if path.exists() else "(no gate.log)"


def test_a_failing_node_is_drained_and_resumed_once_repaired(gate):
    gate.break_it()
    done = gate.health("rc1")
    context = f"{done.stderr}\n{gate.log()}\n{gate.cluster.logs()}"
    assert done.returncode == 1, context
    state, reason = gate.node("rc1")
    assert state == "drained", context
    assert reason.startswith("rigcheck: no_machine_fault_xids: ") and "79" in reason, context
    certificate = latest_certificate(gate)
    assert reason == f"rigcheck: {certificate['root_cause']}"  # one line everywhere
    assert up(gate.node("rc2"))

    gate.repair()
    done = gate.health("rc1")
    assert done.returncode == 0, done.stderr
    assert up(gate.node("rc1")), gate.log()
    assert "resumed: passed, was drained by rigcheck" in gate.log()


def test_a_node_an_administrator_drained_is_left_alone(gate):
    admin = "admin: fan 3 replaced, burn-in pending"
    gate.cluster.client("scontrol", "update", "NodeName=rc2", "State=DRAIN", f"Reason={admin}")
    assert gate.node("rc2") == ("drained", admin)
    gate.break_it()
    assert gate.health("rc2").returncode == 1
    assert gate.node("rc2") == ("drained", admin), gate.log()  # not overwritten
    gate.repair()
    assert gate.health("rc2").returncode == 0
    assert gate.node("rc2") == ("drained", admin), gate.log()  # not resumed
    assert "left drained: passed, but drained by someone else" in gate.log()
    gate.cluster.client("scontrol", "update", "NodeName=rc2", "State=RESUME")


def test_the_epilog_drains_a_node_where_a_fault_appeared_during_the_job(gate, tmp_path):
    gate.repair()
    assert up(gate.node("rc1"))
    # The job "breaks the GPU": Xid 79 appears in the kernel log while it runs.
    job_script = tmp_path / "job.sh"
    job_script.write_text(f"#!/bin/sh\ncp {gate.faulty} {gate.current}\n")
    job_script.chmod(0o755)
    job = gate.cluster.submit(
        ["--nodelist=rc1", f"--output={tmp_path / 'job.out'}", str(job_script)], {}, tmp_path
    )
    state, _ = gate.cluster.wait(job, timeout_s=120)
    context = f"job {job} {state}\n{gate.log()}\n{gate.cluster.logs()}"
    assert state == "COMPLETED", context  # the prolog passed: the job ran
    assert "rigcheck slurm prolog: node rc1: verdict pass" in gate.log(), context
    node_state, reason = wait_for_drain(gate, "rc1")
    assert node_state in ("drained", "draining"), context
    assert reason.startswith("rigcheck: job_left_xid: 1 new Xid event(s) (Xid 79)"), context
    assert "against the prolog's facts" in gate.log()
    assert not list((gate.dir / "jobs").glob("*.facts.json"))  # the baseline is cleaned up
    gate.repair()
    assert gate.health("rc1").returncode == 0 and up(gate.node("rc1"))


def test_on_a_shared_node_another_jobs_process_drains_nothing(gate, tmp_path):
    """No GRES here, so Slurm names no job GPUs: the epilog asks squeue who else is on rc2.
    While job A runs, job B's epilog leaves the process on GPU 0 unjudged (it may be A's); once
    A is the last job, its epilog judges every GPU and drains rc2 for the leftover process."""
    gate.repair()
    assert up(gate.node("rc2"))
    a = gate.cluster.submit(["--partition=shared", "--nodelist=rc2", f"--output={tmp_path}/a",
                             "--wrap=sleep 60"], {}, tmp_path)  # fmt: skip
    wait_for_state(gate, a, "RUNNING")
    b_script = tmp_path / "b.sh"
    b_script.write_text(f"#!/bin/sh\ncp {gate.held} {gate.current}\n")
    b_script.chmod(0o755)
    b = gate.cluster.submit(["--partition=shared", "--nodelist=rc2", f"--output={tmp_path}/b",
                             str(b_script)], {}, tmp_path)  # fmt: skip
    state, _ = gate.cluster.wait(b, timeout_s=120)
    context = f"jobs {a}, {b}: {state}\n{gate.log()}\n{gate.cluster.logs()}"
    assert state == "COMPLETED", context
    wait_for_log(gate, f"GPU processes not judged: the job's GPUs are unknown (no SLURM_JOB_GPUS) "
                 f"and job(s) {a} also here: nothing to do")  # fmt: skip
    assert "drain" not in gate.node("rc2")[0], context  # B is not blamed for A's process
    # B's prolog ran beside A: the busy quick tier (no kernel on GPUs A may own).
    assert f"prolog: node rc2: verdict pass (busy node, job(s) {a} also here: " in gate.log()

    gate.cluster.client("scancel", a)
    node_state, reason = wait_for_drain(gate, "rc2")
    context = f"{gate.log()}\n{gate.cluster.logs()}"
    assert node_state in ("drained", "draining"), context
    assert reason == "rigcheck: job_left_process: GPU 0 still held by pid 4242 after the job"
    assert "processes judged on every GPU: no other job on the node" in gate.log()
    gate.repair()
    assert gate.health("rc2").returncode == 0 and up(gate.node("rc2")), gate.log()


def wait_for_state(gate: Gate, job: str, want: str, timeout_s: float = 60) -> None:
    import time

    deadline = time.monotonic() + timeout_s
    while want not in gate.cluster.client("squeue", "--noheader", f"--jobs={job}", "--format=%T"):
        assert time.monotonic() < deadline, f"job {job} never {want}:\n{gate.cluster.logs()}"
        time.sleep(0.3)


def wait_for_log(gate: Gate, text: str, timeout_s: float = 30) -> None:
    """The epilog writes its line after the job is reported complete: poll gate.log."""
    import time

    deadline = time.monotonic() + timeout_s
    while text not in gate.log():
        assert time.monotonic() < deadline, f"not in gate.log: {text}\n{gate.log()}"
        time.sleep(0.3)


def up(node: tuple[str, str]) -> bool:
    """Idle and not drained; a trailing * (slurmd slow to answer on a busy CI host) aside."""
    return node[0].rstrip("*") == "idle"


def wait_for_drain(gate: Gate, node: str, timeout_s: float = 30) -> tuple[str, str]:
    """The epilog runs after the job is reported complete: poll until it has drained."""
    import time

    deadline = time.monotonic() + timeout_s
    while True:
        state, reason = gate.node(node)
        if "drain" in state or time.monotonic() > deadline:
            return state, reason
        time.sleep(0.3)


def latest_certificate(gate: Gate) -> dict:
    runs = sorted((gate.dir / "runs").glob("health-*"), key=os.path.getmtime)
    return json.loads((runs[-1] / "certificate.json").read_text())
