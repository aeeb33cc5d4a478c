"""InfiniBand port files from public reports (fixtures/realworld/ib_ports.json), read as the
fabric probe reads sysfs: the state and physical state words and the rate in Gb/s."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rigcheck.facts.fabric import nics as fabric

CORPUS = json.loads(
    (Path(__file__).resolve().parents[2] / "fixtures" / "realworld" / "ib_ports.json").read_text()
)
PORTS = CORPUS["ports"]


@pytest.mark.parametrize("port", PORTS, ids=[f"{p['source'][19:]}:{p['device']}" for p in PORTS])
def test_each_port_reads_as_its_source_shows(port):
    files, expect = port["sysfs"], port["expect"]
    assert fabric._word(files["state"]) == expect["state"]
    assert fabric._word(files["phys_state"]) == expect["phys_state"]
    assert fabric.parse_rate(files["rate"]) == expect["rate_gbps"]
