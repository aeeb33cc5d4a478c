"""Host-device copies over PCIe (or the host link): pinned memory judged, pageable reported.

Bytes are counted once: what crosses the link. A pinned copy is what the DMA engines do at
full speed; a pageable copy goes through a staging buffer and mostly measures the host, so it
is reported next to the pinned figure (details["pageable_gbps"]) and never judged. 512 MiB
per copy, as nvbandwidth uses.
"""

from __future__ import annotations

from rigcheck.measure import pinned as pinned_memory
from rigcheck.measure.device import MeasuredDevice
from rigcheck.measure.measurement import Measurement, rates
from rigcheck.measure.numa import on_cpus
from rigcheck.measure.timing import Plan, Timer

MIB = 2**20
COPY_BYTES = 512 * MIB
PLAN = Plan(rounds=8, warmup_rounds=2, round_s=0.05)
PAGEABLE_PLAN = Plan(rounds=3, warmup_rounds=1, round_s=0.05)


def h2d_pinned_gbps(device: MeasuredDevice, timer: Timer) -> Measurement:
    return _link(device, timer, "h2d")


def d2h_pinned_gbps(device: MeasuredDevice, timer: Timer) -> Measurement:
    return _link(device, timer, "d2h")


def copy_into(dst, src, non_blocking: bool) -> None:
    dst.copy_(src, non_blocking=non_blocking)


def host_buffers():
    """(pinned, pageable, what is known of the pinned block) host buffers of random bytes, never
    zeros; a random 4 MiB block tiled, as drawing 512 MiB takes seconds. Both first touched by
    the calling thread; the pinned one new memory, not a cached block (pinned.py)."""
    import torch

    block = torch.randint(1, 256, (4 * MIB,), dtype=torch.uint8)
    pinned, known = pinned_memory.allocate(COPY_BYTES)
    pinned.view(-1, block.numel()).copy_(block)
    # clone() allocates with src.options(), which never carries pinned_memory (aten/src/ATen/
    # native/TensorFactories.cpp, clone -> empty_strided(sizes, strides, src.options())): the
    # copy is pageable. Checked, since a pinned "pageable" buffer would report a pinned figure.
    pageable = pinned.clone()
    if pageable.is_pinned():
        raise AssertionError("torch pinned the clone: the pageable copy would be a pinned one")
    return pinned, pageable, known


def _link(device: MeasuredDevice, timer: Timer, direction: str) -> Measurement:
    import torch

    # On the GPU's own NUMA node (rigcheck/measure/numa.py): a buffer on the far socket
    # would make a healthy GPU of that socket the slow one in the spread check.
    (pinned, pageable, block), bound = on_cpus(device.host_cpus, host_buffers, device.numa_node)
    placement = pinned_memory.placement(bound, block)
    on_device = pinned.to(timer.device).roll(1)  # other bytes than the host's, for the check

    def copy(host, non_blocking):
        if direction == "h2d":
            return lambda: copy_into(on_device, host, non_blocking)
        return lambda: copy_into(host, on_device, non_blocking)

    timing = timer.time(copy(pinned, True), PLAN, headline=True)
    # Checked before the pageable copies, which move the same bytes and would hide a pinned
    # copy that delivered nothing.
    if not torch.equal(pinned[-4096:], on_device[-4096:].cpu()):
        raise AssertionError(f"the pinned {direction} copy did not deliver the bytes it was given")
    pageable_timing = timer.time(copy(pageable, False), PAGEABLE_PLAN)
    gb = COPY_BYTES / 1e9
    median, best = rates(gb, timing.per_call_s)
    way = "host to device" if direction == "h2d" else "device to host"
    return Measurement(
        key=f"{direction}_pinned_gbps",
        device=device.label,
        value=median,
        best=best,
        unit="GB/s",
        definition=f"{COPY_BYTES // MIB} MiB {way} from pinned memory (non_blocking copy_), "
        "bytes counted once, GB = 10^9 bytes",
        samples_s=timing.per_call_s,
        details={
            "copy_bytes": COPY_BYTES,
            "calls_per_round": timing.calls_per_round,
            "pageable_gbps": round(rates(gb, pageable_timing.per_call_s)[0], 3),
            "host_placement": placement,
            "stored_by_pytest_benchmark": timing.stored,
        },
    )
