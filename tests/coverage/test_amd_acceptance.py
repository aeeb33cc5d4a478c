"""The mi300x acceptance cell: a campaign node's burn-in trace read through the real amdsmi over
the simulated libamd_smi (rigcheck/testing/coverage/amd_burnin.py), and each AMD burn-in fault
written below amdsmi from its onset, caught by the check that reads it, on the GPU it hit."""

from __future__ import annotations

import random

import pytest

from rigcheck.burnin import judge
from rigcheck.burnin.limits import Limits
from rigcheck.spec import load_spec
from rigcheck.testing.coverage import acceptance, amd_burnin
from rigcheck.testing.coverage.model import load_model

MI300X = Limits(load_spec("mi300x"))
DEVICES = [
    {"name": "AMD Instinct MI300X", "pci": {"bus_id": b}} for b in ("0000:0c:00.0", "0000:22:00.0")
]


@pytest.fixture
def node_trace(monkeypatch):
    """A 2-GPU node's healthy trace from a one-recording pool: 120 s sampled every 2 s."""
    monkeypatch.setattr(amd_burnin, "POOL_SEEDS", (1,))
    monkeypatch.setattr(acceptance, "DURATION_S", 120.0)
    monkeypatch.setattr(acceptance, "SAMPLE_S", 2.0)
    return lambda rng: acceptance.healthy_trace("mi300x", DEVICES, rng)


JUDGES = {
    "slowdown": lambda t: judge.slowdown(t, MI300X),
    "floor": lambda t: judge.clock_floor(t, MI300X),
    "spread": lambda t: judge.clock_spread(t, MI300X),
    "temperature": lambda t: judge.temperature(t, MI300X),
    "power": lambda t: judge.power(t, MI300X),
    "ecc": lambda t: judge.counters(t, MI300X, "ecc"),
    "throughput": lambda t: judge.throughput(t, MI300X),
}


def found(trace) -> dict[str, list[str]]:
    return {name: lines for name, f in JUDGES.items() if (lines := f(trace))}


def test_healthy_node_passes_at_the_node_bus_ids(node_trace):
    trace = node_trace(random.Random(3))
    assert [d["bus_id"] for d in trace["devices"]] == ["0000:0c:00.0", "0000:22:00.0"]
    assert trace["backend"] == "rocm" and found(trace) == {}


@pytest.mark.parametrize(
    ("signature", "check"),
    [
        ("amd_burnin_thermal_onset", "slowdown"),
        ("amd_burnin_thermal_onset", "temperature"),
        ("amd_burnin_power_brake_onset", "throughput"),
        ("amd_burnin_clock_collapse", "throughput"),
        ("amd_burnin_ecc", "ecc"),
    ],
)
def test_each_amd_burn_in_fault_is_caught_on_its_gpu(node_trace, signature, check):
    rng = random.Random(5)
    trace = node_trace(rng)
    _, signatures, _ = load_model("amd")
    assert acceptance.inject(trace, signatures[signature], rng)
    hit = found(trace)
    assert check in hit, hit
    names = {line.split(" ")[0] for lines in hit.values() for line in lines}
    assert len(names) == 1  # one GPU, the one the fault hit


def test_every_amd_signature_belongs_to_a_cause_and_the_amd_family():
    causes, signatures, _ = load_model("amd")
    mine = {s for c in causes for s in c.signatures}
    amd = {
        n for n, s in signatures.items() if s["kind"] == "amd_burnin" or n.startswith("amd_burnin")
    }
    assert amd and amd <= mine
    sdc = next(c for c in causes if c.name == "sdc")
    assert sdc.signatures == ("amd_burnin_wrong_result",) and sdc.why_not is None
