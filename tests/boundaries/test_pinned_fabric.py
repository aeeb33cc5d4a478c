"""The fabric pinned where realistic bugs hide (tests/mutation/realistic/fabric_host.toml):
two devices share a PCIe switch when their paths share the root port AND the switch's upstream
port (the same root port alone is two switches apart: traffic crosses the root complex); each
InfiniBand port state and physical state the kernel can write, judged entry by entry."""

from __future__ import annotations

import importlib

import pytest
import test_fact_fabric_checks as fact_fabric
from check_calls import call

from rigcheck.facts.fabric import nics as fabric_probe
from rigcheck.facts.fabric.nics import same_switch

fabric_checks = importlib.import_module("suites.facts.test_fabric")

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


# Linux drivers/infiniband/core/sysfs.c writes ports/N/state as "%d: %s" from its state names
# (NOP, DOWN, INIT, ARMED, ACTIVE, ACTIVE_DEFER) and ports/N/phys_state from phys_state_to_str
# ("<unknown>", Sleep, Polling, Disabled, PortConfigurationTraining, LinkUp, LinkErrorRecovery,
# "Phy Test"). A port carries traffic only ACTIVE and LinkUp: every other entry fails.
PORT_STATES = ["0: NOP", "1: DOWN", "2: INIT", "3: ARMED", "4: ACTIVE", "5: ACTIVE_DEFER"]
PHYS_STATES = ["0: <unknown>", "1: Sleep", "2: Polling", "3: Disabled",
               "4: PortConfigurationTraining", "5: LinkUp", "6: LinkErrorRecovery",
               "7: Phy Test"]  # fmt: skip


def ports_up(state: str, phys: str) -> tuple[str, str]:
    facts = fact_fabric.node()
    port = facts.data["fabric"]["rdma_devices"][1]["ports"][0]
    port.update(state=fabric_probe._word(state), phys_state=fabric_probe._word(phys))
    return call(fabric_checks.test_rdma_ports_up, facts, fact_fabric.EXPECTED)[:2]


@pytest.mark.parametrize("state", PORT_STATES)
def test_each_port_state_is_judged_entry_by_entry(state):
    outcome, message = ports_up(state, "5: LinkUp")
    assert outcome == ("passed" if state == "4: ACTIVE" else "failed"), message
    if outcome == "failed":
        assert "mlx5_1 port 1" in message and "mlx5_0" not in message, message


@pytest.mark.parametrize("phys", PHYS_STATES)
def test_each_physical_state_is_judged_entry_by_entry(phys):
    outcome, message = ports_up("4: ACTIVE", phys)
    assert outcome == ("passed" if phys == "5: LinkUp" else "failed"), message


def test_a_nic_with_an_infiniband_port_counts_whatever_its_other_ports_run():
    """A VPI card (ConnectX-7) can run one port InfiniBand and the other Ethernet: it is an
    InfiniBand NIC, and only its InfiniBand port is judged."""
    facts = fact_fabric.node()
    nic = facts.data["fabric"]["rdma_devices"][1]
    ethernet = dict(nic["ports"][0], port=2, link_layer="Ethernet", rate="100 Gb/sec",
                    rate_gbps=100.0, state="DOWN", phys_state="Disabled")  # fmt: skip
    nic["ports"].append(ethernet)
    for check in (fabric_checks.test_rdma_ports_up, fabric_checks.test_rdma_port_rate):
        assert call(check, facts, fact_fabric.EXPECTED)[:2] == ("passed", ""), check.__name__
    assert call(fabric_checks.test_rdma_nic_count, facts, fact_fabric.EXPECTED, 2)[:2] == (
        "passed",
        "",
    )


def test_a_nic_whose_numa_node_is_unknown_is_named_not_skipped():
    """sysfs writes numa_node -1 where the firmware gave none: such a NIC cannot be shown to
    be next to a GPU, and NUMA placement fails closed naming it."""
    facts = fact_fabric.node()
    facts.data["fabric"]["rdma_devices"][1]["pci"]["numa_node"] = -1
    expected = dict(fact_fabric.EXPECTED, placement="numa_node")
    outcome, message, _ = call(fabric_checks.test_rdma_nic_placement, facts, expected)
    assert outcome == "failed", message
    assert "mlx5_1 (0000:c1:00.0) is on NUMA node -1, which has no GPU" in message, message


# Linux drivers/infiniband/core/sysfs.c rate_show: "%d%s Gb/sec (%dX%s)", with ".5" where the
# rate is a half (SDR and DDR lanes).
@pytest.mark.parametrize(
    ("rate", "gbps"),
    [("400 Gb/sec (4X NDR)", 400.0), ("200 Gb/sec (4X HDR)", 200.0),
     ("2.5 Gb/sec (1X SDR)", 2.5), ("12.5 Gb/sec (1X FDR10)", 12.5)],
)  # fmt: skip
def test_each_rate_the_kernel_writes_is_read_in_gbps(rate, gbps):
    assert fabric_probe.parse_rate(rate) == gbps
