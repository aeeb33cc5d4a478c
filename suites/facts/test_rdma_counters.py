"""RDMA port error counters as they stand (symbol errors, link downs, receive errors, ...).

Facts from /sys/class/infiniband/<dev>/ports/<n>/counters (rigcheck/facts/fabric/rdma_counters.py),
judged by rigcheck/rdma/counter_verdict.py with gcm's limits (facebookresearch/gcm PR #119).
Their change during a burn-in is judged in suites/burnin/test_rdma_links.py.
"""

import warnings

import pytest

from rigcheck.facts.probe import is_error
from rigcheck.plugin.fabric import FABRIC_KEY
from rigcheck.rdma.counter_verdict import SOURCE, judge_levels
from rigcheck.require import require

pytestmark = pytest.mark.facts


def port_counter_blocks(fabric) -> dict:
    """{"mlx5_0/1": counters block} of every port the facts list."""
    blocks = {}
    for device in fabric["rdma_devices"]:
        ports = device["ports"]
        if is_error(ports):
            blocks[f"{device['name']}/?"] = ports
            continue
        for port in ports:
            blocks[f"{device['name']}/{port['port']}"] = port.get(
                "counters", {"error": "not in the snapshot (recorded before rigcheck read them)"}
            )
    return blocks


def test_rdma_port_error_counters(request, facts):
    if "fabric" not in facts.data and request.config.stash.get(FABRIC_KEY, None) is None:
        pytest.skip("no fabric section in this snapshot and no --fabric expected: nothing to judge")
    fabric = require(facts, "fabric")
    if not fabric["applicable"]:
        pytest.skip(f"no RDMA port to judge: {fabric['reason']}")
    failures, warned = judge_levels(port_counter_blocks(fabric))
    if warned:
        warnings.warn(
            f"RDMA port errors below the failing limit: {'; '.join(warned)}", stacklevel=1
        )
    assert not failures, (
        f"RDMA port error counters: {'; '.join(failures)} ({SOURCE}). Symbol errors and "
        "receive errors point at the cable or transceiver (reseat, clean, replace); link_downed "
        "at a flapping link. Counters count since the driver loaded or the last `perfquery -R`."
    )
