"""Placement pinned at the boundary a realistic bug moves (tests/mutation/realistic/
fabric_host.toml, fabric-03): two devices share a PCIe switch when their paths share the root
port AND the switch's upstream port; the same root port alone is two switches apart, and
traffic between them crosses the root complex."""

from __future__ import annotations

import pytest

from rigcheck.facts.fabric import same_switch

ROOT, SWITCH_A, SWITCH_B = "0000:00:01.0", "0000:80:00.0", "0000:90:00.0"


def place(*bridges: str) -> dict:
    return {"bus_id": "0000:c0:00.0", "numa_node": 0, "bridges": list(bridges)}


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (place(ROOT, SWITCH_A, "0000:81:00.0"), place(ROOT, SWITCH_A, "0000:81:01.0"), True),
        (place(ROOT, SWITCH_A, "0000:81:00.0"), place(ROOT, SWITCH_B, "0000:91:00.0"), False),
        (place(ROOT), place(ROOT), False),  # both straight on one root port: no switch
        (place(ROOT, SWITCH_A), place("0000:00:02.0", SWITCH_A), False),
    ],
)
def test_one_switch_needs_the_same_root_port_and_switch_port(a, b, same):
    assert same_switch(a, b) is same and same_switch(b, a) is same
