"""Software-stack facts: torch (in its own process), nvcc."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from typing import Any

from rigcheck.facts.probe import CommandRunner, error_record

TORCH_PROBE_TIMEOUT_S = 300  # first CUDA init on 8 GPUs plus a flash-attn import can be slow


def probe_torch_process() -> dict[str, Any]:
    """Run rigcheck.facts.torch_probe in a child process and read its JSON."""
    argv = [sys.executable, "-m", "rigcheck.facts.torch_probe"]
    try:
        result = CommandRunner(TORCH_PROBE_TIMEOUT_S)(argv)
    except subprocess.TimeoutExpired:
        reason = f"the torch probe did not finish in {TORCH_PROBE_TIMEOUT_S} s (CUDA init hung?)"
        return {"torch": error_record(reason)}
    if result.returncode != 0:
        tail = (result.stderr or "").strip().splitlines()[-3:]
        reason = f"the torch probe exited {result.returncode}: {' | '.join(tail)}"
        return {"torch": error_record(reason)}
    try:
        return json.loads(result.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        return {"torch": error_record(f"the torch probe printed no JSON: {result.stdout[-200:]}")}


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
