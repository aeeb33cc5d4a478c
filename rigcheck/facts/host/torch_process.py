"""The torch probe's child process, started early so `import torch` overlaps the other probes.

Importing torch is most of what `rigcheck facts` costs (over a second of CPU). The child starts
first and imports torch while the parent reads NVML, sysfs and the kernel log. It then waits at
a gate (a line on its stdin) before it touches a GPU: NVML reads clocks, temperature, throttle
reasons and running processes at idle and with no CUDA context of ours on the devices, exactly
as when the probe ran alone. Only then does the parent open the gate and the child run its
CUDA queries and smoke kernels.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

from rigcheck.facts.probe import error_record

TORCH_PROBE_TIMEOUT_S = 300  # first CUDA init on 8 GPUs plus a flash-attn import can be slow
GATE_FLAG = "--gate"  # the child waits for a line on stdin before it touches a GPU


class TorchProbe:
    """One run of `python -m rigcheck.facts.host.torch_probe --gate`: start, release, result."""

    def __init__(self, timeout_s: float = TORCH_PROBE_TIMEOUT_S, argv: list[str] | None = None):
        """argv: the child's command line (tests give a stand-in child)."""
        self.timeout_s = timeout_s
        self._started = time.monotonic()
        self._start_error: str | None = None
        self._answer: dict[str, Any] | None = None
        argv = argv or [sys.executable, "-m", "rigcheck.facts.host.torch_probe", GATE_FLAG]
        try:
            self._proc: subprocess.Popen[str] | None = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        except OSError as exc:  # no such interpreter, no processes left
            self._proc = None
            self._start_error = f"the torch probe could not start: {exc}"

    def release(self) -> None:
        """Open the gate: from now on the child may create CUDA contexts and run kernels."""
        if self._proc is None or self._proc.stdin is None:
            return
        stdin, self._proc.stdin = self._proc.stdin, None  # communicate() must not touch it again
        try:
            stdin.write("go\n")
            stdin.close()
        except OSError:  # BrokenPipeError: the child already finished (no torch) or died
            pass  # result() says which

    def result(self) -> dict[str, Any]:
        """The child's JSON facts, or a torch error record saying why there are none."""
        if self._answer is None:
            self._answer = self._wait()
        return self._answer

    def _wait(self) -> dict[str, Any]:
        if self._proc is None:
            return {"torch": error_record(self._start_error or "the torch probe did not start")}
        self.release()  # a caller that never opened the gate must not wait for the timeout
        left = max(1.0, self.timeout_s - (time.monotonic() - self._started))
        try:
            stdout, stderr = self._proc.communicate(timeout=left)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.communicate()
            reason = f"the torch probe did not finish in {self.timeout_s:g} s (CUDA init hung?)"
            return {"torch": error_record(reason)}
        return parse_answer(self._proc.returncode, stdout, stderr)


def parse_answer(returncode: int, stdout: str, stderr: str) -> dict[str, Any]:
    """The last stdout line is the probe's JSON; a non-zero exit keeps stderr's tail as reason."""
    if returncode != 0:
        tail = (stderr or "").strip().splitlines()[-3:]
        reason = f"the torch probe exited {returncode}: {' | '.join(tail)}"
        return {"torch": error_record(reason)}
    try:
        answer = json.loads(stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        answer = None
    if not isinstance(answer, dict):
        return {"torch": error_record(f"the torch probe printed no JSON object: {stdout[-200:]}")}
    return answer


def probe_torch_process() -> dict[str, Any]:
    """Run the torch probe to the end with nothing overlapping it."""
    return TorchProbe().result()
