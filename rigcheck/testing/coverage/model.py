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


# Why a cause has no signature on a family's nodes, where its entry does not say.
NO_SIGNATURE = {
    "host": "a cpu node has no GPU: this cause's signatures are a GPU's",
    "amd": "no signature modelled for AMD GPUs",
    "nvidia": "no signature modelled for NVIDIA GPUs",
}


@cache
def load_model(
    family: str = "nvidia",
) -> tuple[tuple[Cause, ...], dict[str, dict[str, Any]], dict[str, str]]:
    """(causes, signatures by name, sources) from causes.json, each cause with the signatures a
    node of `family` can show ("nvidia", "amd", "host"); every named signature exists."""
    data = json.loads(CAUSES_FILE.read_text())
    signatures = data["signatures"]
    unknown = {s for c in data["causes"] for s in c["signatures"]} - set(signatures)
    if unknown:
        raise ValueError(f"{CAUSES_FILE.name}: signatures named but not defined: {sorted(unknown)}")
    causes = tuple(_cause(c, signatures, family) for c in data["causes"])
    return causes, signatures, data["sources"]


def _cause(entry: dict[str, Any], signatures: dict[str, Any], family: str) -> Cause:
    mine = tuple(s for s in entry["signatures"] if family in families(signatures[s]))
    why = None
    if not mine:
        why = (entry.get("why_not_on") or {}).get(family) or entry.get("why_not")
        why = why or NO_SIGNATURE[family]
    return Cause(entry["name"], entry["label"], entry["llama3"], mine, why)


def families(signature: dict[str, Any]) -> list[str]:
    """The node families a signature can be injected into: its "families" (a fabric's, on any
    GPU node), else its one "family" (NVIDIA's by default)."""
    return signature.get("families") or [signature.get("family", "nvidia")]
