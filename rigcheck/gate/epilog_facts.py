"""The epilog's facts of the machine now, read by `rigcheck facts` in a child process with a hard
timeout. A job can leave a GPU wedged so that an NVML call never returns; read in-process, the
epilog would then hang in slurmd with the node still in service. Killed, it is a finding that
drains the node, naming the time it waited.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from rigcheck.facts import load_facts
from rigcheck.gate.epilog import Finding

COMMAND = (sys.executable, "-m", "rigcheck", "facts", "-o")


def facts_in_child(
    timeout_s: float, command: tuple[str, ...] | None = None
) -> tuple[dict[str, Any] | None, Finding | None]:
    """(facts, None), or (None, why they could not be read) when the child hung or failed."""
    command = command or COMMAND
    with tempfile.TemporaryDirectory(prefix="rigcheck-epilog-") as tmp:
        out = Path(tmp) / "facts.json"
        try:
            done = subprocess.run([*command, str(out)], capture_output=True, text=True,
                                  timeout=timeout_s)  # fmt: skip
        except subprocess.TimeoutExpired:
            return None, Finding(
                "facts_unread",
                f"the machine's facts were not read within {timeout_s:g} s (killed): a driver "
                "or NVML call that does not return, e.g. a GPU the job left wedged",
            )
        if done.returncode != 0 or not out.is_file():
            said = (done.stderr.strip().splitlines() or ["no message"])[-1]
            return None, Finding(
                "facts_unread", f"`rigcheck facts` exited {done.returncode}: {said[:200]}"
            )
        return load_facts(out).data, None
