"""Health limits from a class's spec (expected/<class>.json "health_limits"), read fail-closed,
and the guards the counter checks share."""

from __future__ import annotations

from typing import Any

import pytest

from rigcheck.facts import Facts
from rigcheck.require import fact
from rigcheck.spec import Spec


def health_limit(spec: Spec, key: str) -> float:
    """A ceiling or floor from the spec; a class without it fails the check, never passes it."""
    entry = spec.data.get("health_limits", {}).get(key)
    value = entry.get("value") if isinstance(entry, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        pytest.fail(
            f"cannot check: expected/{spec.name}.json has no health_limits.{key} (a number with "
            "its unit and source): add it, as the other class files have it",
            pytrace=False,
        )
    return value


def nvidia_only(spec: Spec, what: str) -> None:
    """Counters come from NVML and the NVIDIA driver's log; AMD's need amdsmi (not read yet)."""
    if spec.vendor == "amd":
        pytest.xfail(f"AMD {what} are not probed yet: needs amdsmi")
    if spec.vendor != "nvidia":
        pytest.skip(f"{what}: only NVIDIA classes report them; {spec.name} is {spec.vendor}")


def newer_fact(facts: Facts, path: str) -> Any:
    """A fact rigcheck added with the counter probes (issue 12), read through the typed accessor;
    a snapshot recorded before them cannot have it: that replay skips, saying so."""
    section = path.split(".")[0]
    if facts.origin.get("kind") == "recorded" and section not in facts.data:
        version = facts.origin.get("rigcheck_version", "?")
        pytest.skip(
            f"{section} is not in this recording (rigcheck {version} did not probe it yet): "
            "record the machine again with `rigcheck facts -o FILE` to judge it"
        )
    return fact(facts, path)
