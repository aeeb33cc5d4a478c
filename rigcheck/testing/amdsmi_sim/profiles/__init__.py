"""Device profiles as data (one JSON per platform, each value with its source), turned into a
simulated node: every GPU answers its platform's profile; the bus ids are the node's own."""

from __future__ import annotations

import copy
import json
from itertools import combinations
from pathlib import Path
from typing import Any

from rigcheck.testing.amdsmi_sim.node import Node

FOLDER = Path(__file__).resolve().parent


def load_profile(name: str) -> dict[str, Any]:
    return json.loads((FOLDER / f"{name}.json").read_text())


def node_from_profile(name: str, bus_ids: list[str]) -> Node:
    """A node of len(bus_ids) GPUs of the named profile, every pair joined as it says."""
    profile = load_profile(name)
    devices = [{**copy.deepcopy(profile["device"]), "bdf": bus} for bus in bus_ids]
    pairs = {(a, b): dict(profile["pair"]) for a, b in combinations(bus_ids, 2)}
    return Node(devices, pairs, lib_version=profile["lib_version"])
