"""PCIe replays judged as a rate, the way NVIDIA's DCGM health watch judges them.

A replay is a packet the link resent after a bit error. The counter only grows, so a healthy
node that has been up for weeks shows a count any fixed ceiling eventually exceeds (NVIDIA's
own 8x H100 capture: 106-174 per GPU). DCGM's PCIe health watch (DCGM_FR_PCI_REPLAY_RATE,
"Detected more than %u PCIe replays per minute") instead allows, per minute, the bit errors the
PCIe specification's bit-error rate of 1e-12 lets the link make at its speed and width:
NVIDIA/DCGM@72fa3fe modules/health/DcgmHealthWatch.cpp GetExpectedPcieReplayRate (DCGM 3.3.8+;
before it a flat 8 per minute, DcgmGpuHardwareLimits.h DCGM_LIMIT_MAX_PCIREPLAY_RATE, which is
the Gen3 x16 figure).
https://github.com/NVIDIA/DCGM/blob/master/modules/health/DcgmHealthWatch.cpp
"""

from __future__ import annotations

import math

# Transfer rate per lane in GT/s, PCIe Gen1..Gen6, as DCGM's table lists them.
GIGATRANSFERS = (2.5, 5.0, 8.0, 16.0, 32.0, 64.0)


def replays_allowed_per_minute(gen: int, lanes: int) -> int:
    """DCGM's ceiling: 1e-12 errors per bit x the link's bits per minute, rounded up.

    Computed as DCGM does (GT/s / 1000 * 60 per lane, times lanes, ceil), so the figures agree:
    Gen3 x16 -> 8, Gen4 x16 -> 16, Gen5 x16 -> 31. A generation past DCGM's table counts as its
    last, as DCGM caps it.
    """
    if gen < 1 or lanes < 1:
        raise ValueError(f"no PCIe link at gen {gen} x{lanes}")
    per_lane = GIGATRANSFERS[min(gen, len(GIGATRANSFERS)) - 1] / 1000 * 60
    return math.ceil(per_lane * lanes)


def replays_per_minute(replays: int, seconds: float) -> float:
    """The average rate over `seconds`; the counter's interval must be known and positive."""
    if seconds <= 0:
        raise ValueError(f"an interval of {seconds} s cannot give a rate")
    return replays / (seconds / 60)


def too_fast(replays: int, seconds: float, gen: int, lanes: int) -> str | None:
    """What is wrong with `replays` counted over `seconds` on a Gen`gen` x`lanes` link, or None.

    The generation is the link's fastest (errors accrue fastest there; at idle the link may
    have dropped to Gen1, which would hold it to a lower ceiling than its working speed).
    """
    if seconds <= 0 or gen < 1 or lanes < 1:
        return f"{replays} replays, but no rate over {seconds:.0f} s on a Gen{gen} x{lanes} link"
    rate = replays_per_minute(replays, seconds)
    allowed = replays_allowed_per_minute(gen, lanes)
    if rate <= allowed:
        return None
    return (
        f"{replays} replays in {seconds / 3600:.2f} h = {rate:.1f}/min, above the {allowed}/min "
        f"a Gen{gen} x{lanes} link allows"
    )
