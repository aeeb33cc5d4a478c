"""A single-host Slurm cluster for one test: munged, slurmctld and two slurmd ("nodes" rc1 and rc2
on this host), all in one temporary folder, on free ports, stopped by the PIDs they were started
with. Debian's packages (slurmctld, slurmd, munge, slurm-client), run as root: slurmd starts a
job's tasks as the user who submitted it."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

PROGRAMS = (
    "munged", "slurmctld", "slurmd", "sbatch", "srun", "scontrol", "scancel", "sinfo", "squeue",
)  # fmt: skip
SBIN_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/local/sbin"])
NODES = ("rc1", "rc2")
FINISHED = {
    "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED",
    "BOOT_FAIL", "DEADLINE",
}  # fmt: skip


def missing() -> str | None:
    """Why no cluster can be started here, or None."""
    absent = [p for p in PROGRAMS if shutil.which(p, path=SBIN_PATH) is None]
    if absent:
        install = "apt-get install slurmctld slurmd munge slurm-client"
        return f"{', '.join(absent)} not installed ({install})"
    if os.geteuid() != 0:
        return "slurmd must run as root to start a job's tasks as their user"
    return None


def require_slurm() -> None:
    """Where Slurm is missing the tests skip, saying how to install it, except under
    RIGCHECK_REQUIRE_SLURM=1 (CI sets it): there a missing Slurm fails, never a silent skip."""
    why = missing()
    if why:
        if os.environ.get("RIGCHECK_REQUIRE_SLURM") == "1":
            pytest.fail(f"RIGCHECK_REQUIRE_SLURM=1 but no Slurm cluster can start here: {why}")
        pytest.skip(f"no single-host Slurm cluster: {why} (CI installs it and runs this)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SlurmCluster:
    def __init__(self, root: Path, extra_conf: tuple[str, ...] = ()) -> None:
        self.root = root
        self.extra_conf = extra_conf  # more slurm.conf lines (the gate test's Prolog, Epilog)
        self.host = socket.gethostname().split(".")[0]  # what slurmctld compares SlurmctldHost to
        self.conf = root / "slurm.conf"
        self.daemons: list[tuple[str, subprocess.Popen]] = []
        self.env = {
            k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SBATCH_", "SRUN_"))
        }  # a pytest run inside a Slurm job must not hand its own job's settings to this cluster
        self.env.update(SLURM_CONF=str(self.conf), PATH=SBIN_PATH)

    # -- starting and stopping ---------------------------------------------------------------

    def start(self, timeout_s: float = 30) -> None:
        self.root.chmod(0o755)  # munged: everyone needs execute permission on its socket's folder
        key = self.root / "munge.key"
        key.write_bytes(os.urandom(128))
        key.chmod(0o600)
        socket_path, r = self.root / "munge.socket", self.root
        self._daemon("munged", "munged", "-F", f"--key-file={key}", f"--socket={socket_path}",
                     f"--pid-file={r / 'munged.pid'}", f"--seed-file={r / 'munged.seed'}",
                     f"--log-file={r / 'munged.log'}")  # fmt: skip
        self._wait_for(socket_path.exists, timeout_s, "munged's socket")
        for node in NODES:
            (self.root / "spool" / node).mkdir(parents=True)
        (self.root / "state").mkdir()
        self.conf.write_text(self._slurm_conf(socket_path))
        self._daemon("slurmctld", "slurmctld", "-D", "-i")
        for node in NODES:
            self._daemon(f"slurmd {node}", "slurmd", "-D", "-N", node)
        self._wait_for(self._nodes_idle, timeout_s, f"nodes {', '.join(NODES)} idle")

    def stop(self) -> None:
        """Cancel what is still queued or running (slurmstepd outlives slurmd), then end the
        daemons this object started, newest first: SIGTERM, and SIGKILL after 10 s."""
        if any(name == "slurmctld" and p.poll() is None for name, p in self.daemons):
            self.client("scancel", "--partition=ci")
            self._wait_for(lambda: not self.jobs(), 20, "cancelled jobs to end", fail=False)
        for _, proc in reversed(self.daemons):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for _, proc in reversed(self.daemons):
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)

    def _daemon(self, name: str, *argv: str) -> None:
        log = (self.root / f"{name.replace(' ', '-')}.out").open("wb")
        proc = subprocess.Popen(
            [shutil.which(argv[0], path=SBIN_PATH), *argv[1:]],
            stdout=log, stderr=subprocess.STDOUT, env=self.env, cwd=self.root,
        )  # fmt: skip
        log.close()
        self.daemons.append((name, proc))

    def _slurm_conf(self, munge_socket: Path) -> str:
        r = self.root
        lines = [
            "ClusterName=rigcheck",
            f"SlurmctldHost={self.host}(127.0.0.1)",
            f"SlurmctldPort={free_port()}",
            "SlurmUser=root",
            "AuthType=auth/munge",
            f"AuthInfo=socket={munge_socket}",
            f"StateSaveLocation={r / 'state'}",
            f"SlurmdSpoolDir={r / 'spool' / '%n'}",
            f"SlurmctldPidFile={r / 'slurmctld.pid'}",
            f"SlurmdPidFile={r / 'slurmd-%n.pid'}",
            f"SlurmctldLogFile={r / 'slurmctld.log'}",
            f"SlurmdLogFile={r / 'slurmd-%n.log'}",
            # No cgroups in a container: processes tracked by parent PID, no CPU binding.
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "SelectType=select/cons_tres",
            "MpiDefault=none",
            "ReturnToService=2",
            # Two slurmd on this host, one per "node", each on its own port; NodeAddr is what
            # the sbatch example resolves the rendezvous host from.
            *(
                f"NodeName={node} NodeHostname={self.host} NodeAddr=127.0.0.1 "
                f"Port={free_port()} CPUs=1 State=UNKNOWN"
                for node in NODES
            ),
            "PartitionName=ci Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
            *self.extra_conf,
        ]
        return "\n".join(lines) + "\n"

    def _wait_for(self, ready, timeout_s: float, what: str, fail: bool = True) -> None:
        deadline = time.monotonic() + timeout_s
        while not ready():
            dead = [name for name, p in self.daemons if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                if not fail:
                    return
                why = f"{', '.join(dead)} exited" if dead else f"not within {timeout_s:.0f} s"
                raise RuntimeError(f"Slurm cluster: waiting for {what}: {why}\n{self.logs()}")
            time.sleep(0.2)

    def _nodes_idle(self) -> bool:
        out = self.client("sinfo", "--noheader", "--Node", "--format=%N %T")
        states = dict(line.split() for line in out.splitlines() if line.strip())
        return all(states.get(node) == "idle" for node in NODES)

    # -- using it ----------------------------------------------------------------------------

    def client(self, *argv: str) -> str:
        """A client command's output; empty when it failed (the controller not up yet)."""
        argv = (shutil.which(argv[0], path=SBIN_PATH) or argv[0], *argv[1:])
        done = subprocess.run(argv, capture_output=True, text=True, env=self.env, timeout=30)
        return done.stdout if done.returncode == 0 else ""

    def jobs(self) -> list[str]:
        return self.client("squeue", "--noheader", "--format=%i").split()

    def submit(self, argv: list[str], env: dict[str, str], cwd: Path) -> str:
        """sbatch --parsable; the job id."""
        done = subprocess.run(
            [shutil.which("sbatch", path=SBIN_PATH), "--parsable", *argv],
            capture_output=True, text=True, env={**self.env, **env}, cwd=cwd, timeout=30,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"sbatch failed: {done.stderr.strip()}\n{self.logs()}")
        return done.stdout.strip().split(";")[0]

    def wait(self, job: str, timeout_s: float) -> tuple[str, str]:
        """(JobState, ExitCode) once the job has ended. Polled every 0.5 s: `sbatch --wait`
        polls at growing intervals, which cost this test about 30 s more than the job took."""
        deadline = time.monotonic() + timeout_s
        while True:
            fields = dict(
                f.split("=", 1)
                for f in self.client("scontrol", "--oneliner", "show", "job", job).split()
                if "=" in f
            )
            if fields.get("JobState") in FINISHED:
                return fields["JobState"], fields.get("ExitCode", "?")
            if time.monotonic() > deadline:
                self.client("scancel", job)
                raise TimeoutError(f"job {job} still {fields.get('JobState')} after {timeout_s} s")
            time.sleep(0.5)

    def logs(self, tail: int = 1500) -> str:
        parts = []
        for path in sorted(self.root.glob("*.log")) + sorted(self.root.glob("*.out")):
            text = path.read_text(errors="replace")
            parts.append(f"--- {path.name} ---\n{text[-tail:]}")
        return "\n".join(parts)
