"""The acceptance check before renting a long run: does the planned job fit, with what headroom."""

import pytest

from rigcheck.memory.estimate import estimate
from rigcheck.memory.units import format_bytes
from rigcheck.require import device_values, gpu_label, require

pytestmark = pytest.mark.memory

HOST_BACKENDS = ("cpu", "mps")  # the device's memory is host memory (unified on Apple silicon)


def free_memory(facts, spec) -> list[tuple[str, int]]:
    """(label, free bytes) for each device the job would run on, as measured."""
    if spec.backend in HOST_BACKENDS:
        return [("host memory", require(facts, "host.memory_available_bytes"))]
    devices = require(facts, "devices")
    if not devices:
        pytest.fail(f"no {spec.backend} devices in the facts to place the plan on", pytrace=False)
    return [(gpu_label(d), free) for d, free in device_values(devices, "memory_free_bytes")]


def test_planned_job_fits_in_free_memory(memory_plan, facts, spec, record_property):
    if memory_plan is None:
        pytest.skip("no --plan given: pass --plan FILE (rigcheck fit's options as JSON) to check")
    need = estimate(memory_plan.job).total_bytes
    devices = free_memory(facts, spec)
    record_property("plan_needs_bytes", need)
    record_property("plan_headroom_bytes", min(free for _, free in devices) - need)
    short = [
        f"{label}: needs {format_bytes(need)}, free {format_bytes(free)}, "
        f"headroom {format_bytes(free - need)}"
        for label, free in devices
        if free < need
    ]
    assert not short, (
        f"the job in {memory_plan.source} does not fit on {len(short)} device(s) of this "
        f"{spec.name}:\n  " + "\n  ".join(short) + "\nCheck `rigcheck fit` with the plan's "
        "options for the parts, free memory held by other processes, or plan a smaller job."
    )
