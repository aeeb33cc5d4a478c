"""Machine and driver profiles: data files under profiles/, each naming its source."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from rigcheck.testing.nvml_sim.library import SYMBOLS

PROFILES = Path(__file__).resolve().parent / "profiles"
MACHINES = sorted(p.stem for p in (PROFILES / "machines").glob("*.json"))
_DRIVERS = json.loads((PROFILES / "drivers.json").read_text())
DRIVERS = sorted(_DRIVERS["generations"])


def machine_profile(name: str) -> dict[str, Any]:
    """A fresh copy (tests may break it) of profiles/machines/NAME.json."""
    return json.loads((PROFILES / "machines" / f"{name}.json").read_text())


def driver_profile(name: str) -> dict[str, Any]:
    """Generation NAME (R525...R580): its version, CUDA, and the symbols it exports."""
    generation = copy.deepcopy(_DRIVERS["generations"][name])
    since = _DRIVERS["since"]
    generation["name"] = name
    generation["symbols"] = sorted(s for s in SYMBOLS if since.get(s, 0) <= generation["branch"])
    return generation


def machine_driver(machine: dict[str, Any]) -> dict[str, Any]:
    """The generation of the machine's own driver version, reporting that version."""
    branch = int(machine["driver_version"].split(".")[0])
    generations = _DRIVERS["generations"]
    older = [g for g in DRIVERS if generations[g]["branch"] <= branch]
    if not older:
        raise ValueError(f"driver {machine['driver_version']} is older than every generation")
    driver = driver_profile(max(older, key=lambda g: generations[g]["branch"]))
    driver["version"] = machine["driver_version"]
    driver["cuda_driver_version"] = machine["cuda_driver_version"]
    return driver
