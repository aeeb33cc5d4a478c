"""The class's burn-in limits, read from the spec's `burn_in` block (expected/<class>.json).

Each limit is {value, source} or null where it does not apply to the class (no TDP on a CPU
host); a class without the block cannot be burned in, which fails closed rather than passing.
"""

from __future__ import annotations

import re
from typing import Any

from rigcheck.burnin.trace import BurnInError

DURATION = re.compile(r"^(\d+(?:\.\d+)?)(s|m|h)$", re.ASCII)  # 0-9: not '５m'
UNIT_S = {"s": 1, "m": 60, "h": 3600}
MIN_DURATION_S = 10.0  # shorter than this, the warm-up is most of the run


def parse_duration(text: str) -> float:
    """'20s', '60s', '5m', '1h' -> seconds; anything else is a usage error saying the form."""
    match = DURATION.match(text.strip())
    if not match:
        raise ValueError(f"--burn-in={text}: write a duration such as 20s, 60s, 5m or 1h")
    seconds = float(match.group(1)) * UNIT_S[match.group(2)]
    if seconds < MIN_DURATION_S:
        raise ValueError(f"--burn-in={text}: at least {MIN_DURATION_S:g}s (60s for a quick look)")
    return seconds


class Limits:
    """`limit(key)` -> the value, or None when the class says it does not apply."""

    def __init__(self, spec: Any):
        block = spec.data.get("burn_in")
        if not isinstance(block, dict):
            raise BurnInError(
                f"{spec.name} ({spec.title}) has no burn-in limits: add a `burn_in` block to "
                f"{spec.path.name} (see expected/h100.json) before burning it in"
            )
        self.spec = spec
        self.block = block

    def limit(self, key: str) -> Any:
        entry = self.block.get(key)
        return entry["value"] if isinstance(entry, dict) else None

    def source(self, key: str) -> str:
        entry = self.block.get(key)
        return entry.get("source", "") if isinstance(entry, dict) else ""

    @property
    def errors(self) -> dict[str, int] | None:
        """New counts allowed during the load, per counter; None where the class has none."""
        entry = self.block.get("error_limits")
        if not isinstance(entry, dict):
            return None
        return {k: v for k, v in entry.items() if k != "source"}

    @property
    def precision(self) -> str:
        return self.limit("precision")

    @property
    def tdp_w(self) -> float | None:
        tdp = self.spec.data["expect"].get("tdp")
        return float(tdp["value"]) if isinstance(tdp, dict) else None
