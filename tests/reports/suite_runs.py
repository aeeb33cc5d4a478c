"""Running the real suites in a subprocess, as a user does: `python -m pytest -m cpu ...`."""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SUITES = str(REPO / "suites")
HERE = Path(__file__).resolve().parent


def suite_command(*args: str) -> list[str]:
    """The user's command, plus the test-only steering plugin (inert unless its env is set)."""
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "steer_run", *args]


def suite_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RIGCHECK_STEER_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), env.get("PYTHONPATH")]))
    return {**env, **extra}


def run_suites(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*suite_command(*args), SUITES],
        cwd=cwd,
        env=suite_env(**env),
        capture_output=True,
        text=True,
        timeout=300,
    )
