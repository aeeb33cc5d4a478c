"""The NIC cause's kernel-log signature (causes.json nic_firmware_fatal_logged): a real mlx5_core
record of a failing ConnectX firmware, written into a campaign node's log naming one of its NICs,
is read by the real kernel-log reader and fails test_no_nic_faults, naming the NIC's PCI address
and RDMA device; before rigcheck read mlx5_core's records the same node passed (the gap the
campaign found); a healthy NIC's real boot and link lines fail nothing."""

from __future__ import annotations

import importlib
import json
import random
from pathlib import Path

import pytest
from check_calls import call

from rigcheck.facts import Facts
from rigcheck.facts.kernel_log import reader
from rigcheck.spec import load_spec
from rigcheck.testing.coverage import corpus, fabric
from rigcheck.testing.coverage.judge import _kernel_log
from rigcheck.testing.coverage.model import load_model
from rigcheck.testing.coverage.node import healthy_node, inject
from rigcheck.testing.synthetic import synthetic_snapshot

suite = importlib.import_module("suites.facts.test_kernel_log")
SIGNATURE = "nic_firmware_fatal_logged"
REPO = Path(__file__).resolve().parents[2]
UPTIME_S = 20_000.0  # after every line's stamp: the whole boot is read


def _facts(node, lines: list[str], root: Path) -> Facts:
    """The h100 snapshot with this kernel log, read by the real reader, and the node's fabric."""
    snapshot = synthetic_snapshot(load_spec("h100"))
    snapshot["kernel_log"] = _kernel_log(lines, UPTIME_S)
    gpus = [{"index": i, "pci": {"bus_id": bus}} for i, bus in enumerate(node.fabric.gpu_buses)]
    snapshot["fabric"] = fabric.fabric_facts(node.fabric, gpus, root)
    return Facts(snapshot)


def _faulty(seed: int):
    rng = random.Random(seed)
    node = healthy_node("h100", rng)
    _, signatures, _ = load_model("nvidia")
    assert inject(node, SIGNATURE, signatures[SIGNATURE], rng)
    return node


def test_the_nic_cause_counts_the_signature_on_gpu_nodes():
    for family in ("nvidia", "amd"):
        causes, _, _ = load_model(family)
        assert SIGNATURE in next(c for c in causes if c.name == "nic").signatures


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_real_firmware_record_fails_the_node_naming_its_nic(tmp_path, seed):
    node = _faulty(seed)
    names = {n.bus_id: n.name for n in node.fabric.nics}
    named = {b for line in node.log_lines for b in names if b in line}
    assert len(named) == 1, node.log_lines  # the record names one of the node's NICs
    (bus,) = named
    outcome, message, _ = call(suite.test_no_nic_faults, load_spec("h100"),
                               _facts(node, node.log_lines, tmp_path))  # fmt: skip
    assert outcome == "failed", message
    assert f"NIC {bus} ({names[bus]})" in message


def test_the_same_node_passed_before_rigcheck_read_mlx5_records(tmp_path, monkeypatch):
    """The gap: the record's lines carry no level a GPU rule or the unexplained rule reads, so
    without the mlx5 reader nothing failed (the check had nothing to judge)."""
    node = _faulty(1)
    monkeypatch.setattr(reader, "parse_mlx5_lines", lambda lines: [])
    facts = _facts(node, node.log_lines, tmp_path)
    assert facts.data["kernel_log"]["mlx5_events"] == []
    assert facts.data["kernel_log"]["unexplained_events"] == []
    spec = load_spec("h100")
    assert call(suite.test_no_nic_faults, spec, facts)[0] == "passed"
    assert call(suite.test_no_machine_fault_xids, spec, facts, facts.devices)[0] == "passed"


def test_a_healthy_nics_real_boot_and_link_lines_fail_nothing(tmp_path):
    node = healthy_node("h100", random.Random(4))
    data = json.loads(corpus.CORPUS.read_text())["mlx5"]
    benign = [line for item in data for line, expect in item["lines"]
              if all(e is None for _, e in item["lines"])]  # fmt: skip
    lines = [corpus.retarget(line, node.fabric.nics[0].bus_id) for line in benign]
    assert len(lines) >= 10
    facts = _facts(node, lines, tmp_path)
    spec = load_spec("h100")
    assert call(suite.test_no_nic_faults, spec, facts)[:2] == ("passed", "")
    assert call(suite.test_no_unexplained_driver_errors, spec, facts, facts.devices,
                _Request())[:2] == ("passed", "")  # fmt: skip


class _Request:
    """pytest's request, as far as test_no_unexplained_driver_errors reads it (the tier)."""

    class config:  # pytest's attribute name
        @staticmethod
        def getoption(name, default=None):
            return default
