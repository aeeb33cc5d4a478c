"""The clock-event time probe through the real pynvml over the simulated libnvidia-ml: each
counter lands under its own nvml.h name (distinct values), only on drivers whose header has its
field id, and the ids follow the header's renumbering by branch."""

import copy

import pytest

from rigcheck.facts.nvidia.clock_event_time import field_ids
from rigcheck.facts.nvidia.nvml import probe_nvidia
from rigcheck.testing.nvml_sim import machine_profile, simulated_nvml

NAMES = ["sw_power_cap", "sync_boost", "sw_therm_slowdown", "hw_therm_slowdown",
         "hw_power_brake_slowdown"]  # fmt: skip
DISTINCT = {f"clocks_event_reason_{n}": (i + 1) * 10**9 for i, n in enumerate(NAMES)}
DISTINCT["perf_policy_thermal"] = 7 * 10**9


def read(driver, version=None):
    machine = copy.deepcopy(machine_profile("h100_hgx"))
    machine["gpus"][1]["clock_event_time_ns"] = dict(DISTINCT)
    if version:  # the machine's own driver, on the newest generation the simulator has
        machine["driver_version"] = version
    with simulated_nvml(machine, driver) as lib:
        _, devices = probe_nvidia()
    assert not lib.crashes
    return devices[1]["clock_event_time_ns"]


@pytest.mark.parametrize(
    ("driver", "names"),
    [
        ("R580", list(DISTINCT)),
        ("R535", ["clocks_event_reason_sw_power_cap", "clocks_event_reason_sync_boost",
                  "perf_policy_thermal"]),
        ("R418", None),
    ],
)  # fmt: skip
def test_each_counter_holds_its_own_field(driver, names):
    found = read(driver)
    assert found == (None if names is None else {n: DISTINCT[n] for n in names})


def test_the_slowdown_ids_follow_the_headers_numbering():
    """CUDA 12.9/13.0 headers (R575, R580): 251-253; CUDA 13.1 on: 269-271, 251 then power
    smoothing; a branch between them reads neither."""
    slow = "clocks_event_reason_hw_therm_slowdown"
    assert field_ids(580)[slow] == 252 and field_ids(590)[slow] == 270
    assert slow not in field_ids(570) and slow not in field_ids(585)
    assert field_ids(450)["clocks_event_reason_sw_power_cap"] == 74


def test_a_590_or_later_driver_answers_the_slowdowns_under_their_new_ids():
    """A 595 driver (the l40s capture's) numbers the slowdowns 269-271 and 251-253 are power
    smoothing there: read by the new ids, each counter still lands under its own name."""
    assert read(None, version="595.91.07") == DISTINCT
