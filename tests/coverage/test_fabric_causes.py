"""The campaign's RDMA fabric (rigcheck/testing/coverage/fabric.py): each network and NIC
signature written into a node's /sys tree is read by the real fabric probe and fails its check;
a healthy node of every fabric class passes them; the gap the campaign found (a NIC's degraded
PCIe link) is caught now and was missed before; and a probe that stops reading a port's rate
fails the gate, naming the cause."""

from __future__ import annotations

import dataclasses
import importlib
import json
import random
from pathlib import Path

import pytest
from check_calls import call

from rigcheck.facts import Facts
from rigcheck.facts.fabric import nics
from rigcheck.facts.snapshot import validate_snapshot
from rigcheck.plugin.fabric import load_fabric_spec
from rigcheck.rdma.counter_verdict import judge_change, judge_levels
from rigcheck.spec import load_spec
from rigcheck.testing.coverage import campaign, fabric
from rigcheck.testing.coverage.campaign import Plan, run
from rigcheck.testing.coverage.gate import regressions
from rigcheck.testing.coverage.model import load_model
from rigcheck.testing.coverage.node import healthy_node, inject
from rigcheck.testing.synthetic import synthetic_snapshot

checks = importlib.import_module("suites.facts.test_fabric")
counters = importlib.import_module("suites.facts.test_rdma_counters")
REPO = Path(__file__).resolve().parents[2]
GATE = REPO / "fixtures" / "coverage" / "h100-quick-gate.json"
# The idle checks each signature must fail (the flap shows only during the burn-in).
FAILS = {
    "ib_port_down": "test_rdma_ports_up",
    "ib_port_no_subnet_manager": "test_rdma_ports_up",
    "ib_port_narrow": "test_rdma_port_rate",
    "ib_port_slow": "test_rdma_port_rate",
    "ib_symbol_errors": "test_rdma_port_error_counters",
    "ib_receive_errors": "test_rdma_port_error_counters",
    "nic_off_bus": "test_rdma_nic_count",
    "nic_pcie_narrow": "test_rdma_nic_pcie_link",
    "nic_pcie_slow": "test_rdma_nic_pcie_link",
}


def fabric_facts(node, root: Path) -> Facts:
    """The node's fabric section as the probe reads its tree (GPUs: the node's own bus ids)."""
    gpus = [{"index": i, "pci": {"bus_id": bus}} for i, bus in enumerate(node.fabric.gpu_buses)]
    return Facts({"origin": {"kind": "synthetic"},
                  "fabric": fabric.fabric_facts(node.fabric, gpus, root)})  # fmt: skip


def verdicts(facts: Facts, cls: str) -> dict[str, tuple[str, str]]:
    """Each idle fabric check's (outcome, message) on these facts, against the class's spec."""
    spec = load_fabric_spec(str(REPO / fabric.SPECS[cls]))
    gpus = len(facts.data["fabric"]["gpus"])
    named = ("test_rdma_ports_up", "test_rdma_port_rate", "test_rdma_nic_pcie_link",
             "test_rdma_nic_placement")  # fmt: skip
    found = {name: call(getattr(checks, name), facts, spec)[:2] for name in named}
    found["test_rdma_nic_count"] = call(checks.test_rdma_nic_count, facts, spec, gpus)[:2]
    # test_rdma_port_error_counters itself asks pytest's config: its verdict, called directly
    failures, _ = judge_levels(counters.port_counter_blocks(facts.data["fabric"]))
    found["test_rdma_port_error_counters"] = ("failed" if failures else "passed", str(failures))
    return found


def faulty(signature: str, seed: int = 5):
    rng = random.Random(seed)
    node = healthy_node("h100", rng)
    _, signatures, _ = load_model("nvidia")
    assert inject(node, signature, signatures[signature], rng)
    return node


@pytest.mark.parametrize("cls", sorted(fabric.SPECS))
def test_a_healthy_fabric_node_passes_every_fabric_check(tmp_path, cls):
    found = verdicts(fabric_facts(healthy_node(cls, random.Random(1)), tmp_path), cls)
    assert {name: outcome for name, (outcome, _) in found.items()} == dict.fromkeys(found, "passed")


def test_healthy_ports_vary_as_the_real_capture_does(tmp_path):
    """Each port's counters are one of the real healthy ports' (procfs's capture): the traffic
    counters differ between ports, every error counter is 0."""
    node = healthy_node("h100", random.Random(2))
    ports = [d["ports"][0]["counters"] for d in
             fabric_facts(node, tmp_path).data["fabric"]["rdma_devices"]]  # fmt: skip
    assert len({json.dumps(p, sort_keys=True) for p in ports}) > 1
    assert all(not any(p["counters"].values()) for p in ports if "symbol_error" in p["counters"])


@pytest.mark.parametrize("signature", sorted(FAILS))
def test_each_signature_is_read_by_the_probe_and_fails_its_check(tmp_path, signature):
    found = verdicts(fabric_facts(faulty(signature), tmp_path), "h100")
    outcome, message = found[FAILS[signature]]
    assert outcome == "failed", (signature, found)
    assert "mlx5_" in message or "RDMA NICs of" in message, message  # names the NIC or count


def test_a_flap_during_the_burn_in_fails_only_the_change(tmp_path):
    """Idle, the flapping port reads clean; the burn-in's before/after samples show it."""
    node = faulty("ib_link_flap_during_burnin")
    facts = fabric_facts(node, tmp_path)
    assert "failed" not in {outcome for outcome, _ in verdicts(facts, "h100").values()}
    samples = fabric.burn_in_samples(node.fabric, tmp_path)
    failures, _ = judge_change(samples["before"], samples["after"], "burn-in")
    assert len(failures) == 1 and "time(s) during the burn-in" in failures[0], failures


def test_a_nic_wider_than_its_slot_and_a_vf_without_a_link_are_not_failed(tmp_path):
    """Never cry wolf: an x16 NIC in an x8 slot is the platform's design, and a virtual
    function's link (speed Unknown, width 0) is the host's; only a link below both ends fails."""
    node = healthy_node("h100", random.Random(3))
    narrow, vf = node.fabric.nics[2], node.fabric.nics[3]
    narrow.link["current_link_width"] = "8"
    fabric_facts(node, tmp_path)  # the tree written
    device = (tmp_path / "sys/bus/pci/devices" / narrow.bus_id).resolve()
    (device.parent / "max_link_width").write_text("8\n")
    device = (tmp_path / "sys/bus/pci/devices" / vf.bus_id).resolve()
    (device / "current_link_speed").write_text("Unknown\n")
    (device / "current_link_width").write_text("0\n")
    gpus = [{"index": i, "pci": {"bus_id": bus}} for i, bus in enumerate(node.fabric.gpu_buses)]
    facts = Facts({"origin": {"kind": "synthetic"}, "fabric": nics.probe_fabric(gpus, tmp_path)})
    devices = facts.data["fabric"]["rdma_devices"]
    assert devices[2]["pcie_link"]["slot_max_width"] == 8 and devices[3]["pcie_link"] is None
    assert verdicts(facts, "h100")["test_rdma_nic_pcie_link"] == ("passed", "")


def test_a_maximum_the_kernel_names_no_speed_for_limits_nothing(tmp_path):
    """A card of a generation newer than the kernel reads max_link_speed 'Unknown' (the
    kernel's pci_speed_string has no name for it): the link is judged against the slot, not
    failed as unreadable; a NIC below its slot's known maximum still fails."""
    node = healthy_node("h100", random.Random(3))
    newer, slow = node.fabric.nics[2], node.fabric.nics[3]
    slow.link["current_link_speed"] = "16.0 GT/s PCIe"
    fabric_facts(node, tmp_path)
    device = (tmp_path / "sys/bus/pci/devices" / newer.bus_id).resolve()
    (device / "max_link_speed").write_text("Unknown\n")
    gpus = [{"index": i, "pci": {"bus_id": bus}} for i, bus in enumerate(node.fabric.gpu_buses)]
    facts = Facts({"origin": {"kind": "synthetic"}, "fabric": nics.probe_fabric(gpus, tmp_path)})
    devices = facts.data["fabric"]["rdma_devices"]
    assert devices[2]["pcie_link"]["max_speed_gts"] is None, devices[2]["pcie_link"]
    outcome, message = verdicts(facts, "h100")["test_rdma_nic_pcie_link"]
    assert outcome == "failed" and slow.name in message and newer.name not in message, message


def test_a_node_whose_only_nic_is_gone_is_judged_not_refused(tmp_path):
    """An unreadable /sys/class/net is an error record in the facts, which the facts schema
    took for both an error and an object (oneOf): the snapshot was refused as invalid, and an
    A100 node whose one NIC had gone could not be judged (found by the campaign)."""
    (tmp_path / "sys/class/infiniband").mkdir(parents=True)  # no HCA left, no /sys/class/net
    section = nics.probe_fabric([{"index": 0, "pci": {"bus_id": "0000:06:00.0"}}], tmp_path)
    assert "error" in section["nccl_ib"]["interfaces"]
    snapshot = synthetic_snapshot(load_spec("a100_40gb"), gpus=1)
    validate_snapshot({**snapshot, "fabric": section}, "node")  # raised: "invalid facts snapshot"


def test_the_rate_signatures_keep_the_kernels_format(tmp_path):
    narrow, slow = (faulty(s, seed=7).fabric for s in ("ib_port_narrow", "ib_port_slow"))
    rates = {n.rate for f in (narrow, slow) for n in f.nics} - {"400 Gb/sec (4X NDR)"}
    assert rates <= {"200 Gb/sec (2X NDR)", "100 Gb/sec (1X NDR)", "200 Gb/sec (4X HDR)"}
    assert len(rates) == 2  # one port each


def only(monkeypatch, cause: str, signature: str) -> None:
    """The campaign of one cause with one signature (a node a signature, judged for real)."""
    causes, signatures, sources = campaign.load_model("nvidia")
    row = next(c for c in causes if c.name == cause)
    one = dataclasses.replace(row, signatures=(signature,))
    monkeypatch.setattr(campaign, "load_model", lambda family: ((one,), signatures, sources))


def test_the_gap_a_nics_degraded_pcie_link_is_caught_now_and_was_missed_before(
    monkeypatch, tmp_path
):
    """A NIC at x8 of x16, its port ACTIVE at 400 Gb/s: judged by the tier's real suites, it
    fails test_rdma_nic_pcie_link; with the probe as it was (no NIC link read), it passes."""
    only(monkeypatch, "nic", "nic_pcie_narrow")
    plan = Plan("h100", "quick", seed=0, healthy=0, per_signature=1)
    (now,) = run(plan, tmp_path / "now")["causes"]
    assert (now["caught"], now["checks"]) == (1, {"test_rdma_nic_pcie_link": 1})
    read = nics._rdma_device

    def as_before(path):
        device = read(path)
        device.pop("pcie_link")
        return device

    monkeypatch.setattr(nics, "_rdma_device", as_before)
    (before,) = run(plan, tmp_path / "before")["causes"]
    assert (before["runs"], before["caught"], before["missed"]) == (1, 0, ["nic_pcie_narrow"])


def test_a_probe_that_reads_every_rate_as_full_fails_the_gate_naming_the_cause(
    monkeypatch, tmp_path
):
    """The mutant: the rate comparison defeated (every port read at the spec's 400 Gb/s). The
    narrow port passes, and the gate names the network cause against its saved baseline."""
    monkeypatch.setattr(nics, "parse_rate", lambda rate: 400.0)
    only(monkeypatch, "network", "ib_port_narrow")
    result = run(Plan("h100", "quick", seed=0, healthy=0, per_signature=1), tmp_path)
    baseline = json.loads(GATE.read_text())
    baseline["plan"] = result["plan"]  # the gate compares cause by cause: this one cause
    (found,) = regressions(baseline, result)
    assert found.startswith("Network switch/cable: caught 0/1, was ")
    assert found.endswith("(missed: ib_port_narrow)")
