"""Real servers for one test, each in a temporary folder, on a free loopback port, stopped by the
PID it was started with: PostgreSQL (Debian's postgresql), prometheus-node-exporter and
prometheus (Debian's packages). Where one is missing the test skips saying how to install it,
except under its RIGCHECK_REQUIRE_* variable (CI sets them): there it fails."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

POSTGRES_BIN = sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)  # newest first
SBIN_PATH = os.pathsep.join([os.environ.get("PATH", ""), *POSTGRES_BIN, "/usr/sbin", "/usr/bin"])


def require(programs: tuple[str, ...], package: str, env: str) -> dict[str, str]:
    """Each program's path; or skip (fail under env=1) naming the Debian package."""
    found = {p: shutil.which(p, path=SBIN_PATH) for p in programs}
    absent = [p for p, path in found.items() if path is None]
    if absent:
        why = f"{', '.join(absent)} not installed (apt-get install {package})"
        if os.environ.get(env) == "1":
            pytest.fail(f"{env}=1 but {why}")
        pytest.skip(f"{why}; CI installs it and runs this")
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(ready: Callable[[], bool], timeout_s: float, what: str, proc=None) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"{what}: the server exited with {proc.returncode}")
        if ready():
            return
        time.sleep(0.2)
    raise AssertionError(f"{what}: not ready after {timeout_s:.0f} s")


def stop(proc: subprocess.Popen, how: int = signal.SIGTERM) -> None:
    """The one process this test started, by its PID: `how`, then SIGKILL after 15 s."""
    if proc.poll() is None:
        proc.send_signal(how)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


class Postgres:
    """initdb and postgres as a non-root user (PostgreSQL refuses to run as root: as root, the
    `postgres` account Debian's package creates), trust authentication on 127.0.0.1 only."""

    def __init__(self, root: Path) -> None:
        self.bins = require(("initdb", "postgres"), "postgresql", "RIGCHECK_REQUIRE_POSTGRES")
        self.root, self.port = root, free_port()
        self.user = "postgres" if os.geteuid() == 0 else None
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://rigcheck@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        data = self.root / "data"
        if self.user:
            entry = pwd.getpwnam(self.user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        subprocess.run(
            [self.bins["initdb"], "-D", str(data), "-U", "rigcheck", "--auth=trust", "-E", "UTF8",
             "--no-sync"],
            user=self.user, check=True, capture_output=True, timeout=120, cwd=self.root,
        )  # fmt: skip
        self.proc = subprocess.Popen(
            [self.bins["postgres"], "-D", str(data), "-p", str(self.port), "-k", str(self.root),
             "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"],
            user=self.user, cwd=self.root, stdout=subprocess.DEVNULL,
            stderr=open(self.root / "postgres.log", "wb"),  # noqa: SIM115 (the server keeps it)
        )  # fmt: skip
        wait_for(self._accepts, 60, "PostgreSQL", self.proc)

    def _accepts(self) -> bool:
        import psycopg

        try:
            psycopg.connect(
                f"host=127.0.0.1 port={self.port} user=rigcheck dbname=postgres"
            ).close()
        except psycopg.OperationalError:
            return False
        return True

    def stop(self) -> None:
        if self.proc is not None:
            stop(self.proc, signal.SIGINT)  # PostgreSQL's "fast" shutdown


class PrometheusStack:
    """prometheus-node-exporter with only its textfile collector, and a prometheus server that
    scrapes it every second; both listen on 127.0.0.1 only."""

    def __init__(self, root: Path, textfile_dir: Path) -> None:
        self.bins = require(
            ("prometheus", "prometheus-node-exporter"),
            "prometheus prometheus-node-exporter",
            "RIGCHECK_REQUIRE_PROMETHEUS",
        )
        self.root, self.textfile_dir = root, textfile_dir
        self.exporter_port, self.port = free_port(), free_port()
        self.procs: list[subprocess.Popen] = []

    def start(self) -> None:
        exporter = f"127.0.0.1:{self.exporter_port}"
        self._start(self.bins["prometheus-node-exporter"], "--collector.disable-defaults",
                    "--collector.textfile", f"--collector.textfile.directory={self.textfile_dir}",
                    f"--web.listen-address={exporter}")  # fmt: skip
        config = self.root / "prometheus.yml"
        config.write_text(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            f"scrape_configs: [{{job_name: node, static_configs: [{{targets: ['{exporter}']}}]}}]\n"
        )
        self._start(self.bins["prometheus"], f"--config.file={config}",
                    f"--storage.tsdb.path={self.root / 'tsdb'}",
                    f"--web.listen-address=127.0.0.1:{self.port}")  # fmt: skip

    def _start(self, *command: str) -> None:
        log = open(self.root / f"{Path(command[0]).name}.log", "wb")  # noqa: SIM115 (kept open)
        self.procs.append(subprocess.Popen(command, cwd=self.root, stdout=log, stderr=log))

    def query(self, promql: str) -> list[dict]:
        """The result of an instant PromQL query over prometheus' HTTP API ([] until scraped)."""
        import json
        import urllib.parse
        import urllib.request

        url = f"http://127.0.0.1:{self.port}/api/v1/query?" + urllib.parse.urlencode(
            {"query": promql}
        )
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                answer = json.load(response)
        except OSError:  # not listening yet
            return []
        assert answer["status"] == "success", answer
        return answer["data"]["result"]

    def logs(self) -> str:
        return "\n".join(p.read_text(errors="replace")[-2000:] for p in self.root.glob("*.log"))

    def stop(self) -> None:
        for proc in reversed(self.procs):
            stop(proc)
