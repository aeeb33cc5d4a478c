"""The burn-in on AMD GPUs: traces recorded by rigcheck's AMD reader through the real amdsmi over
the simulated libamd_smi (rigcheck/testing/amd_trace.py), judged against expected/mi300x.json.

A healthy MI300X at its power cap (PPT violation active most of the run) passes; a thermal
throttle, a power brake below the cap, a clock collapse (ROCm/legacy-rocm-build#4414's 59 MHz)
and ECC errors during the run each fail, naming the GPU; an amdsmi release without a call
leaves that reading out, says why, and raises nothing.
"""

from __future__ import annotations

import types
from functools import cache

import pytest
from amd_real import RELEASES

from rigcheck.burnin import judge
from rigcheck.burnin.limits import Limits
from rigcheck.burnin.record import platform_matches
from rigcheck.burnin.trace import trace_problem
from rigcheck.layout import ROOT_DIR
from rigcheck.spec import load_spec
from rigcheck.testing import amd_trace
from rigcheck.testing.amd_trace import Fault

MI300X = Limits(load_spec("mi300x"))
GPU1 = "gpu1 (AMD Instinct MI300X, 0000:2a:00.0)"


@cache
def recorded(*faults: Fault, release=None) -> dict:
    """Two GPUs, 72 s sampled every 2 s: ~0.2 s through the simulated library."""
    return amd_trace.record(gpus=2, faults=faults, duration_s=72.0, interval_s=2.0, release=release)


def problems(trace: dict) -> dict[str, list[str]]:
    """Every judge's problems on the trace; a judge that cannot judge raises (no quiet pass)."""
    found = {
        "slowdown": judge.slowdown(trace, MI300X),
        "clock_floor": judge.clock_floor(trace, MI300X),
        "clock_spread": judge.clock_spread(trace, MI300X),
        "temperature": judge.temperature(trace, MI300X),
        "power": judge.power(trace, MI300X),
        "ecc": judge.counters(trace, MI300X, "ecc"),
        "pages": judge.counters(trace, MI300X, "remaps"),
        "pcie": judge.counters(trace, MI300X, "pcie"),
        "link": judge.link_width(trace),
        "throughput": judge.throughput(trace, MI300X),
    }
    return {name: lines for name, lines in found.items() if lines}


def test_healthy_mi300x_at_its_power_cap_passes():
    trace = recorded()
    assert trace_problem(trace) is None
    reasons = trace["devices"][0]["samples"]["reasons"]
    assert sum(r == ["ppt_power"] for r in reasons) > len(reasons) / 2  # capped most of the run
    assert problems(trace) == {}


@pytest.mark.parametrize(
    ("fault", "check", "says"),
    [
        (Fault("thermal", 1), "slowdown", "prochot, socket_thermal in"),
        (Fault("thermal", 1), "temperature", "101 C"),
        (Fault("power_brake", 1), "power", "420 W (90th percentile under load)"),
        (Fault("clock_collapse", 1), "clock_floor", "59 MHz median under load"),
        (Fault("ecc", 1, onset_s=40.0), "ecc", "new ecc_uncorrected (limit 0)"),
    ],
    ids=["thermal-violation", "thermal-hotspot", "power-brake", "clock-collapse", "ecc"],
)
def test_fault_fails_naming_the_gpu(fault, check, says):
    found = problems(recorded(fault))
    assert check in found, found
    assert [line for line in found[check] if line.startswith(GPU1) and says in line], found[check]
    assert not any(line.startswith("gpu0") for lines in found.values() for line in lines)


def test_ppt_counted_as_a_slowdown_would_fail_every_healthy_mi300x(monkeypatch):
    """The broken variant the allowance guards against: PPT (the power cap) read as a fault."""
    monkeypatch.setattr(judge, "SLOWDOWN_REASONS", (*judge.SLOWDOWN_REASONS, "ppt_power"))
    assert judge.slowdown(recorded(), MI300X)


@pytest.mark.parametrize("release", RELEASES)
def test_every_amdsmi_release_records_without_a_traceback(release):
    """Before ROCm 6.3 amdsmi has no violation status: the reasons column is left out, the
    slowdown check skips saying why, and the hotspot still fails a thermal throttle."""
    trace = recorded(Fault("thermal", 1), release=release)
    assert trace_problem(trace) is None
    assert all(d["limits"]["clock_max_mhz"] == 2100 for d in trace["devices"])
    assert all(d["limits"]["power_limit_w"] == 750 for d in trace["devices"])
    found = problems(trace) if "reasons" not in trace["unavailable"] else {}
    if "reasons" in trace["unavailable"]:
        assert "amdsmi_get_violation_status" in trace["unavailable"]["reasons"]
        with pytest.raises(judge.NotApplicable, match="violation status not judged"):
            judge.slowdown(trace, MI300X)
        found = {n: f(trace) for n, f in [("temperature", _temperature), ("floor", _floor)]}
    assert any(line.startswith(GPU1) for line in found["temperature"])


def _temperature(trace):
    return judge.temperature(trace, MI300X)


def _floor(trace):
    return judge.clock_floor(trace, MI300X)


def test_a_failed_read_is_a_null_not_an_exception():
    """libamd_smi answering an error for one call: that column is null, the rest is read."""
    from rigcheck.burnin import amd_sampler
    from rigcheck.testing.amdsmi_sim import import_amdsmi
    from rigcheck.testing.amdsmi_sim.node import Node
    from rigcheck.testing.amdsmi_sim.profiles import load_profile

    node = Node([{**load_profile("mi300x_8gpu")["device"], "bdf": "0000:18:00.0"}])
    smi = import_amdsmi(node)
    smi.amdsmi_init()
    node.fail[("amdsmi_get_power_info", None)] = 8  # AMDSMI_STATUS_API_FAILED
    row = amd_sampler.amd_reader(smi, smi.amdsmi_get_processor_handles()[0])()
    assert row["power_w"] is None and row["clock_mhz"] == 2105 and row["temperature_c"] == 39
    assert row["reasons"] == [] and row["hbm_temperature_c"] is None  # MI300X: no HBM sensor


@pytest.mark.parametrize(
    ("backend", "cuda", "hip", "says"),
    [
        ("rocm", "12.4", None, "is a CUDA 12.4 build: the burn-in needs a ROCm build"),
        ("rocm", None, None, "is a CPU-only build: the burn-in needs a ROCm build"),
        ("cuda", None, "6.2.41133", "is a ROCm 6.2.41133 build: the burn-in needs a CUDA build"),
    ],
)
def test_torch_build_that_cannot_drive_the_class_is_one_line(backend, cuda, hip, says):
    torch = types.SimpleNamespace(
        __version__="2.5.1", version=types.SimpleNamespace(cuda=cuda, hip=hip)
    )
    with pytest.raises(SystemExit) as exc:
        platform_matches(torch, backend)
    assert says in str(exc.value) and "\n" not in str(exc.value)


def test_matching_torch_build_passes():
    rocm = types.SimpleNamespace(
        __version__="2.5.1", version=types.SimpleNamespace(cuda=None, hip="6.2")
    )
    platform_matches(rocm, "rocm")


def test_healthy_mi300x_trace_passes_the_burn_in_suite(judge_trace):
    """The packaged suites/burnin on the healthy trace, as `rigcheck check mi300x
    --burn-in-trace` runs them: nothing fails; Xid and NVRM checks skip (NVIDIA only)."""
    facts = f"--facts={ROOT_DIR}/fixtures/snapshots/mi300x.json"
    _, cases = judge_trace(recorded(), facts, gpus=2, klass="mi300x")
    outcomes = {name: case.outcome for name, case in cases.items()}
    assert not [n for n, o in outcomes.items() if o in ("failed", "error")], outcomes
    assert outcomes["test_no_xid_events"] == outcomes["test_no_nvrm_fault_records"] == "skipped"
    assert outcomes["test_no_thermal_or_power_brake_slowdown"] == "passed"


def test_rocm_backend_matches_torch_gpus_to_amdsmi_by_bus(monkeypatch):
    """record.py's ROCm backend on a ROCm torch (faked: no GPU here) and the simulated
    libamd_smi: each torch GPU gets the amdsmi handle at its bus id, its limits and counters."""
    from rigcheck.burnin import record
    from rigcheck.facts.amd import smi
    from rigcheck.testing.amdsmi_sim import import_amdsmi
    from rigcheck.testing.amdsmi_sim.node import Node
    from rigcheck.testing.amdsmi_sim.profiles import load_profile

    buses = ["0000:2a:00.0", "0000:18:00.0"]  # amdsmi lists them out of bus order
    module = import_amdsmi(
        Node([{**load_profile("mi300x_8gpu")["device"], "bdf": b} for b in buses])
    )
    monkeypatch.setattr(smi, "load_amdsmi", lambda: module)
    props = [
        types.SimpleNamespace(pci_domain_id=0, pci_bus_id=bus, pci_device_id=0)
        for bus in (0x18, 0x2A)
    ]
    deterministic = []
    torch = types.SimpleNamespace(
        __version__="2.5.1",
        version=types.SimpleNamespace(cuda=None, hip="6.3.42131"),
        use_deterministic_algorithms=lambda on, warn_only: deterministic.append((on, warn_only)),
        device=lambda kind, i: (kind, i),
        cuda=types.SimpleNamespace(
            device_count=lambda: 2,
            get_device_properties=lambda i: props[i],
            get_device_name=lambda i: "AMD Instinct MI300X",
        ),
    )
    backend = record._rocm(torch)
    assert [e["bus_id"] for e in backend.entries] == ["0000:18:00.0", "0000:2a:00.0"]
    assert backend.entries[0]["limits"]["power_limit_w"] == 750
    assert backend.entries[1]["counters_before"]["ecc_uncorrected"] == 0
    assert backend.readers[0]()["power_w"] == 191 and backend.xid(0, 1)["error"]
    assert deterministic == [(True, True)]  # rocBLAS without atomics: bit-identical repeats
