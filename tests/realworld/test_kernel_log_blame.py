"""Which GPU a kernel-log record is blamed on when a node's log holds more than one incident.

Each excerpt of fixtures/realworld/kernel_log.json is one incident on one machine. A multi-GPU
node's `dmesg` holds several, one after another; the records without a GPU of their own (an
RmInitAdapter failure of an old driver, GSP firmware that did not start, amdgpu's unprefixed
DRM_ERROR ring timeout) are tied to the GPU the lines beside them name, and never to a guess.
The logs below are real excerpts, verbatim, JOINED BY HAND in the order given (the joining is
the only thing written here); each test says which lines it joins and why.
"""

from __future__ import annotations

import json
from pathlib import Path

from rigcheck.facts.kernel_log.amdgpu import parse_amdgpu_lines
from rigcheck.facts.kernel_log.nvrm import parse_nvrm

CORPUS = json.loads(
    (Path(__file__).resolve().parents[2] / "fixtures" / "realworld" / "kernel_log.json").read_text()
)


def excerpt(vendor: str, source: str) -> list[str]:
    """The lines of the corpus's (first) excerpt from this page, as its source printed them."""
    item = next(i for i in CORPUS[vendor] if i["source"].endswith(source))
    return [line for line, _ in item["lines"]]


def nvrm_by_kind(lines: list[str]) -> list[tuple[str, str | None]]:
    return [(e["kind"], e["bus_id"]) for e in parse_nvrm(lines)]


def ring_timeouts(lines: list[str]) -> list[str | None]:
    """The GPU of each amdgpu ring timeout the log holds, in order."""
    events = parse_amdgpu_lines(lines)
    return [e["bus_id"] for e in events if " timeout, signaled seq=" in e["text"]]


# --- NVRM records without a GPU (rigcheck/facts/kernel_log/nvrm.py) ---


def test_a_busless_rm_init_adapter_between_two_failing_gpus_is_blamed_on_neither():
    # gpu-operator#649's two GPUs that failed to initialize (04:01.0's two lines, then
    # 04:02.0's), with Bumblebee#722's bus-less "RmInitAdapter failed!" of an older driver
    # between them: either GPU may be the one it means, so it names none (the node fails
    # naming the line), never one of the two by chance.
    two = excerpt("nvidia", "NVIDIA/gpu-operator/issues/649")
    busless = excerpt("nvidia", "Bumblebee-Project/Bumblebee/issues/722")[0]
    assert nvrm_by_kind([*two[:2], busless, *two[2:]]) == [
        ("init_failed", "0000:04:01.0"),
        ("init_failed", None),
        ("init_failed", "0000:04:02.0"),
    ]


def test_a_gsp_failure_at_the_top_of_a_long_log_keeps_the_gpu_right_below_it():
    # open-gpu-kernel-modules#789 (a GSP boot failure, then the same GPU's RmInitAdapter line)
    # followed by NVSentinel#155's lines: the bus-less GSP record is the log's first line, and
    # the window before it must stop at the log's start, not wrap round to its end.
    lines = excerpt("nvidia", "open-gpu-kernel-modules/issues/789") + excerpt(
        "nvidia", "NVIDIA/NVSentinel/issues/155"
    )
    assert len(lines) > 8  # long enough that a window running past the start would miss line 1
    assert nvrm_by_kind(lines)[0] == ("gsp_init_failed", "0000:98:00.0")
    assert ("fallen_off_bus", "0000:b3:00.0") in nvrm_by_kind(lines)


# --- amdgpu lines without a PCI prefix (rigcheck/facts/kernel_log/amdgpu.py) ---

# fuzzyHSA#2's first two lines: amdgpu MES failures that name no GPU (no ring timeout).
NO_GPU = excerpt("amdgpu", "amd/fuzzyHSA/issues/2")[:2]


def test_the_joined_logs_hold_what_each_excerpt_holds():
    """The pieces the tests join are as described: NO_GPU names no GPU and no ring timeout."""
    assert [e["bus_id"] for e in parse_amdgpu_lines(NO_GPU)] == [None, None]
    assert ring_timeouts(NO_GPU) == []
    one_gpu = excerpt("amdgpu", "ROCm/legacy-rocm-build/issues/2196")
    assert ring_timeouts(one_gpu) == ["0000:0d:00.0"]


def test_an_unprefixed_ring_timeout_between_two_gpus_lines_is_blamed_on_neither():
    # legacy-rocm-build#2196 (GPU 0d's SMU lines, then the unprefixed timeout) followed at once by
    # cosmic-comp#2626's reset of GPU 08: both GPUs' lines are beside the timeout.
    lines = (
        excerpt("amdgpu", "ROCm/legacy-rocm-build/issues/2196")
        + excerpt("amdgpu", "pop-os/cosmic-comp/issues/2626")[2:]
    )
    assert ring_timeouts(lines) == [None]


def test_an_unprefixed_ring_timeout_takes_the_gpu_named_just_before_it():
    # legacy-rocm-build#2196: GPU 0d's lines come BEFORE its unprefixed timeout (no reset line
    # after it); bazzite#4464, a second GPU's (08) incident, is logged later, past the window.
    lines = (
        excerpt("amdgpu", "ROCm/legacy-rocm-build/issues/2196")
        + NO_GPU
        + excerpt("amdgpu", "ublue-os/bazzite/issues/4464")
    )
    assert ring_timeouts(lines) == ["0000:0d:00.0", "0000:08:00.0"]


def test_an_unprefixed_ring_timeout_far_from_any_gpu_in_a_multi_gpu_log_names_none():
    # legacy-rocm-build#4021 (an MI300X's errors on GPUs 1c, 42 and 55), then lines naming no GPU,
    # then pop#2132's unprefixed timeout cut before its reset line (the log as read while the GPU
    # hung): the log names three GPUs and none beside the timeout, so it is tied to none of them.
    timeout = excerpt("amdgpu", "pop-os/pop/issues/2132")[:2]
    lines = excerpt("amdgpu", "ROCm/legacy-rocm-build/issues/4021") + NO_GPU * 2 + timeout
    assert ring_timeouts(lines) == [None]
    # ...while in a log that names one GPU only, that GPU is the one (the design's fallback).
    assert ring_timeouts(excerpt("amdgpu", "ROCm/legacy-rocm-build/issues/1386") + NO_GPU * 2
                         + timeout) == ["0000:83:00.0"]  # fmt: skip
