"""The plan-fit check pinned to the memory a job can have (tests/mutation/realistic/memory.toml):
each GPU's free memory, not its total (another process holds the rest); on a host-memory class
the memory available, not installed; the recorded headroom that of the tightest device."""

from __future__ import annotations

import importlib
from types import SimpleNamespace

import pytest
from check_calls import call

from rigcheck.facts import Facts
from rigcheck.spec import load_spec
from rigcheck.testing.synthetic import synthetic_snapshot

plan_fits = importlib.import_module("suites.memory.test_plan_fits")
GIB = 2**30
BAD = 2


@pytest.fixture
def needs(monkeypatch):
    """needs(n): the plan's estimate is n bytes (the estimate itself is tested elsewhere)."""

    def set_need(n_bytes: int) -> SimpleNamespace:
        monkeypatch.setattr(plan_fits, "estimate", lambda job: SimpleNamespace(total_bytes=n_bytes))
        return SimpleNamespace(job=None, source="plan.json")

    return set_need


def judged(plan, data, spec) -> tuple[str, str, dict]:
    recorded = {}
    outcome, message, _ = call(
        plan_fits.test_planned_job_fits_in_free_memory,
        plan,
        Facts(data),
        spec,
        lambda key, value: recorded.__setitem__(key, value),
    )
    return outcome, message, recorded


def test_a_gpu_with_its_memory_held_by_another_process_is_named(needs):
    spec = load_spec("h100")
    data = synthetic_snapshot(spec, gpus=4)
    devices = data["devices"]
    devices[BAD]["memory_free_bytes"] = 10 * GIB  # the rest held by another process
    plan = needs(20 * GIB)
    outcome, message, recorded = judged(plan, data, spec)
    assert outcome == "failed", message
    label = f"GPU {BAD} ({devices[BAD]['pci']['bus_id']})"
    assert label in message and "does not fit on 1 device(s)" in message, message
    assert recorded["plan_headroom_bytes"] == 10 * GIB - 20 * GIB


def test_the_headroom_is_the_tightest_devices(needs):
    spec = load_spec("h100")
    data = synthetic_snapshot(spec, gpus=4)
    frees = [d["memory_free_bytes"] for d in data["devices"]]
    data["devices"][BAD]["memory_free_bytes"] = min(frees) - 5 * GIB
    outcome, message, recorded = judged(needs(GIB), data, spec)
    assert outcome == "passed", message
    assert recorded["plan_headroom_bytes"] == min(frees) - 5 * GIB - GIB


def test_on_the_cpu_class_the_plan_is_placed_on_available_memory(needs):
    spec = load_spec("cpu")
    data = synthetic_snapshot(spec)
    data["host"]["memory_total_bytes"] = 64 * GIB
    data["host"]["memory_available_bytes"] = 8 * GIB  # the rest in use by other programs
    outcome, message, _ = judged(needs(16 * GIB), data, spec)
    assert outcome == "failed" and "host memory" in message, message
