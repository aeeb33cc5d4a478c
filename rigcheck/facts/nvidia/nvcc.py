"""The CUDA compiler on the host: `nvcc --version` from PATH, $CUDA_HOME, $CUDA_PATH or
/usr/local/cuda, with a timeout. (The torch stack is probed in its own process:
host/torch_probe.py.)
"""

from __future__ import annotations

import re
import shutil
import subprocess
from typing import Any

from rigcheck.facts.probe import CommandRunner, error_record

NVCC_RELEASE = re.compile(r"release (\d+\.\d+)")


def probe_nvcc(run: CommandRunner) -> dict[str, Any] | None:
    """nvcc's CUDA release, or None when no nvcc is installed (that is not an error)."""
    path = shutil.which("nvcc") or _cuda_home_nvcc()
    if path is None:
        return None
    try:
        result = run([path, "--version"])
    except subprocess.TimeoutExpired:
        return error_record(f"{path} --version did not answer in {run.timeout_s} s")
    except OSError as exc:  # a broken install: not executable, wrong architecture
        return error_record(f"{path} --version could not run: {exc}")
    match = NVCC_RELEASE.search(result.stdout)
    if result.returncode != 0 or not match:
        return error_record(f"{path} --version gave no release: {result.stdout[-200:]!r}")
    return {"path": path, "version": match.group(1)}


def _cuda_home_nvcc() -> str | None:
    import os

    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home and shutil.which("nvcc", path=f"{home}/bin"):
            return shutil.which("nvcc", path=f"{home}/bin")
    return None
