"""The fault model: published causes of job interruptions, their shares, and the signatures
each leaves on a node (causes.json, data with sources)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

CAUSES_FILE = Path(__file__).with_name("causes.json")


@dataclass(frozen=True)
class Cause:
    name: str
    label: str
    share: int  # interruptions of this cause in the source's count
    signatures: tuple[str, ...]
    why_not: str | None  # why no signature is injected (then detection is 0 by construction)


@cache
def load_model() -> tuple[tuple[Cause, ...], dict[str, dict[str, Any]], dict[str, str]]:
    """(causes, signatures by name, sources) from causes.json; every named signature exists."""
    data = json.loads(CAUSES_FILE.read_text())
    signatures = data["signatures"]
    causes = tuple(
        Cause(c["name"], c["label"], c["llama3"], tuple(c["signatures"]), c.get("why_not"))
        for c in data["causes"]
    )
    unknown = {s for c in causes for s in c.signatures} - set(signatures)
    if unknown:
        raise ValueError(f"{CAUSES_FILE.name}: signatures named but not defined: {sorted(unknown)}")
    return causes, signatures, data["sources"]
