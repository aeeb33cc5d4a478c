"""Every NVML clock event reason bit has a name, and a bit the table lacks is kept, not dropped,
by each of the three readers (facts, measurement telemetry, burn-in sampler): a GPU slowed for
a reason rigcheck does not know must not read as a GPU slowed for no reason."""

from __future__ import annotations

import pynvml  # nvidia-ml-py, the real binding: its constants are NVML's own (nvml.h)
import pytest

from rigcheck.burnin.sampler import nvml_reader
from rigcheck.facts.nvidia.clock_limits import IDLE_REASON_ADVICE
from rigcheck.facts.nvidia.nvml import THROTTLE_REASONS, reason_names
from rigcheck.measure.telemetry import read_sample
from rigcheck.testing.nvml_sim import machine_profile, on_gpu

# The binding's "all reasons" masks; 13.615 has BoardLimit (0x200) and Reliability (0x400)
# only in the deprecated throttle one.
NVML_ALL = pynvml.nvmlClocksEventReasonAll | pynvml.nvmlClocksThrottleReasonAll


def test_every_bit_nvml_defines_is_named():
    named = sum(THROTTLE_REASONS)
    assert NVML_ALL & ~named == 0, f"unnamed NVML reason bits: 0x{NVML_ALL & ~named:x}"
    assert named & ~NVML_ALL == 0, f"named bits NVML does not define: 0x{named & ~NVML_ALL:x}"


@pytest.mark.parametrize(
    "constant, name",
    [
        ("nvmlClocksThrottleReasonBoardLimit", "board_limit"),
        ("nvmlClocksThrottleReasonReliability", "reliability"),
        ("nvmlClocksEventReasonHwSlowdown", "hw_slowdown"),
        ("nvmlClocksEventReasonDisplayClockSetting", "display_clock_setting"),
    ],
)
def test_each_bit_has_nvmls_name(constant, name):
    assert THROTTLE_REASONS[getattr(pynvml, constant)] == name


def test_every_reason_but_idle_has_advice_for_a_gpu_held_at_idle():
    assert set(IDLE_REASON_ADVICE) == set(THROTTLE_REASONS.values()) - {"gpu_idle"}


def test_an_unknown_bit_is_kept_beside_the_known_ones():
    assert reason_names(0x4 | 0x400 | 0x8000) == ["sw_power_cap", "reliability", "unknown_0x8000"]
    assert reason_names(0) == []


def _gpu0(mask, read):
    machine = machine_profile("h100_hgx")
    machine["gpus"][0]["clock_event_reasons"] = mask
    return on_gpu(machine, read)


LOADS = [(0x600, ["board_limit", "reliability"]), (0x10004, ["sw_power_cap", "unknown_0x10000"])]


@pytest.mark.parametrize("mask, names", LOADS)
def test_the_load_readers_keep_every_bit(mask, names):
    assert _gpu0(mask, lambda h: read_sample(pynvml, h))["throttle_reasons"] == names
    assert _gpu0(mask, lambda h: nvml_reader(pynvml, h)())["reasons"] == names
