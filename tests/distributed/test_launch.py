"""The launcher's own promises: whatever ends the wait, the job it started does not outlive it."""

import os
import subprocess
import sys

import pytest

from rigcheck.distributed import launch


def test_an_interrupted_wait_stops_the_job(tmp_path, monkeypatch):
    """torchrun runs in its own session, so a Ctrl-C at the terminal reaches only pytest."""
    started = []

    class InterruptedWhileWaiting(subprocess.Popen):
        def wait(self, timeout=None):
            if not started:
                started.append(self.pid)
                raise KeyboardInterrupt
            return super().wait(timeout)

    monkeypatch.setattr(launch.subprocess, "Popen", InterruptedWhileWaiting)
    monkeypatch.setattr(launch, "GRACE_S", 5.0)
    argv = [sys.executable, "-c", "import time; time.sleep(120)"]
    with pytest.raises(KeyboardInterrupt):
        launch.run_torchrun(argv, tmp_path, timeout_s=60)
    with pytest.raises(ProcessLookupError):  # no process is left in the job's group
        os.killpg(started[0], 0)
