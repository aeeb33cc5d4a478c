"""host_limits.imex has its shape in facts.schema.json, as docs/architecture.md's new-probe recipe
says (its example is this probe): a recorded snapshot with a malformed record is refused at load,
naming the field, instead of reaching the check."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from rigcheck.errors import FactsError
from rigcheck.facts.snapshot import validate_snapshot

GB200 = json.loads(
    (Path(__file__).resolve().parents[2] / "fixtures" / "snapshots" / "gb200.json").read_text()
)


@pytest.mark.parametrize(
    "imex",
    [
        {"channel_dir": True, "channels": [0]},
        {"channel_dir": False, "channels": []},
        {"error": "PermissionError: /dev/nvidia-caps-imex-channels"},
    ],
)
def test_what_the_probe_writes_is_valid(imex):
    snapshot = copy.deepcopy(GB200)
    snapshot["host_limits"]["imex"] = imex
    validate_snapshot(snapshot, "gb200.json")


@pytest.mark.parametrize(
    "imex",
    [
        {"channel_dir": True, "channels": ["channel0"]},
        {"channel_dir": "yes", "channels": [0]},
        {"channels": [0]},
        {"channel_dir": True, "channels": [-1]},
        "N/A",
    ],
)
def test_a_malformed_record_is_refused_naming_the_field(imex):
    snapshot = copy.deepcopy(GB200)
    snapshot["host_limits"]["imex"] = imex
    with pytest.raises(FactsError, match=r"\['host_limits'\]\['imex'\]"):
        validate_snapshot(snapshot, "gb200.json")
