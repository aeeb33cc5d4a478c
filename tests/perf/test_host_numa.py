"""Pinned host buffers on the GPU's own NUMA node (issue 10): on a two-socket node a buffer
on the far socket made the healthy GPUs of that socket the slow ones in the spread check.

On the CPU: the placement comes from the topology facts, the buffer is made in a thread bound
to those CPUs (real sched_setaffinity on this machine, and a fake for a two-socket layout),
and the figure records where it was placed.
"""

from __future__ import annotations

import os
import threading

import pytest

torch = pytest.importorskip("torch")

from perf_inputs import h100_facts  # noqa: E402

from rigcheck.facts import Facts  # noqa: E402
from rigcheck.measure import host_link, numa  # noqa: E402
from rigcheck.measure.device import MeasuredDevice, measured_devices  # noqa: E402
from rigcheck.measure.timing import Plan, Timer  # noqa: E402
from rigcheck.spec import load_spec  # noqa: E402
from rigcheck.testing.synthetic import synthetic_snapshot  # noqa: E402

NODE0, NODE1 = "0-55,112-167", "56-111,168-223"


def test_each_gpu_gets_the_cpus_of_its_own_numa_node():
    facts = Facts(synthetic_snapshot(load_spec("h100"), gpus=8))
    devices = measured_devices(facts, "cuda")
    assert [(d.numa_node, d.host_cpus) for d in devices] == [(0, NODE0)] * 4 + [(1, NODE1)] * 4


def test_no_topology_means_no_placement_and_says_so():
    (device,) = measured_devices(Facts(h100_facts(1)), "cuda")
    assert (device.numa_node, device.host_cpus) == (None, None)
    value, placement = numa.on_cpus(device.host_cpus, lambda: 42)
    assert value == 42 and placement == {
        "bound": False,
        "why": "no NUMA facts for this GPU (topology probe)",
    }


def test_the_buffer_is_made_in_a_thread_bound_to_the_far_socket(monkeypatch):
    """A fake two-socket host: the GPU of node 1 gets its buffer from node 1's CPUs."""
    bound: dict[int, set[int]] = {}
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(224)))
    monkeypatch.setattr(
        os, "sched_setaffinity", lambda pid, cpus: bound.__setitem__(threading.get_ident(), cpus)
    )
    made_in = []
    _, placement = numa.on_cpus(NODE1, lambda: made_in.append(threading.get_ident()), node=1)
    (thread,) = made_in
    assert thread != threading.get_ident() and bound == {
        thread: set(range(56, 112)) | set(range(168, 224))
    }
    assert placement == {"bound": True, "numa_node": 1, "cpus": NODE1}


def test_real_binding_leaves_the_caller_alone():
    before = os.sched_getaffinity(0)
    cpu = min(before)
    inside, placement = numa.on_cpus(str(cpu), lambda: os.sched_getaffinity(0), node=0)
    assert inside == {cpu} and os.sched_getaffinity(0) == before and placement["bound"]


def test_cpus_outside_this_process_are_not_forced(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    _, placement = numa.on_cpus(NODE1, lambda: None, node=1)
    assert not placement["bound"] and "usable by this process" in placement["why"]


def test_the_host_link_figure_records_its_placement(monkeypatch):
    """The real copy code on the CPU (no pinning here): buffers made on the GPU's CPUs."""
    cpu = min(os.sched_getaffinity(0))
    seen = []

    def buffers():
        seen.append(os.sched_getaffinity(0))
        data = torch.randint(1, 256, (host_link.COPY_BYTES,), dtype=torch.uint8)
        return data, data.clone(), {"cache_emptied_by": "torch.accelerator.empty_host_cache",
                                    "new_block": True}  # fmt: skip

    quick = Plan(rounds=3, warmup_rounds=1, round_s=0.002)
    monkeypatch.setattr(host_link, "COPY_BYTES", 1 << 20)
    monkeypatch.setattr(host_link, "PLAN", quick)
    monkeypatch.setattr(host_link, "PAGEABLE_PLAN", quick)
    monkeypatch.setattr(host_link, "host_buffers", buffers)
    device = MeasuredDevice("0", "GPU 0", "cuda", index=0, numa_node=0, host_cpus=str(cpu))
    m = host_link.h2d_pinned_gbps(device, Timer(torch.device("cpu")))
    assert seen == [{cpu}]
    assert m.details["host_placement"] == {
        "bound": True,
        "numa_node": 0,
        "cpus": str(cpu),
        "pinned_block": "new",
        "cache_emptied_by": "torch.accelerator.empty_host_cache",
    }
