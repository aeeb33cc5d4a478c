"""The counter probe's error paths with the real binding's exceptions, followed to the verdict.

The probe runs through the real nvidia-ml-py (pynvml) over the simulated libnvidia-ml
(rigcheck/testing/nvml_sim), answering from a snapshot's record: a call the profile refuses
returns its C
code, and the real binding raises its own subclass for it (NVMLError_GpuIsLost,
NVMLError_NoPermission...). A NotSupported is "not counted" (None); every other error is an error
record, and the check that reads it fails closed naming the GPU: never a pass. Written against
the realistic mutants counters-03 and counters-04 (tests/mutation/realistic/counters.toml), which
stored a library error as "not counted" and an unreadable AER file as "no AER statistics".
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from pathlib import Path

import pynvml
import pytest
from check_calls import call
from counter_fakes import write_aer

from rigcheck.facts import Facts
from rigcheck.facts.nvidia import counters, nvml
from rigcheck.facts.probe import is_error
from rigcheck.spec import load_spec
from rigcheck.testing.nvml_sim import simulated_nvml
from rigcheck.testing.nvml_sim.from_facts import profile_from_snapshot
from rigcheck.testing.synthetic import synthetic_snapshot

checks = importlib.import_module("suites.facts.test_counters")
H100 = load_spec("h100")
SNAPSHOT = synthetic_snapshot(H100, gpus=1)
BAD = 2
# Errors a counter read meets on real machines: a GPU off the bus, a container without the
# capability, a driver that hangs, and NVML's catch-all. Name -> (nvml.h code, simulator answer).
ERRORS = {
    "GpuIsLost": (pynvml.NVML_ERROR_GPU_IS_LOST, "GPU_IS_LOST"),
    "NoPermission": (pynvml.NVML_ERROR_NO_PERMISSION, "NO_PERMISSION"),
    "Timeout": (pynvml.NVML_ERROR_TIMEOUT, "TIMEOUT"),
    "Unknown": (pynvml.NVML_ERROR_UNKNOWN, "UNKNOWN"),
}


def real_error_name(code: int) -> str:
    """The class the real binding raises for this return code."""
    error = pynvml.NVMLError(code)
    assert type(error).__module__ == pynvml.__name__  # the binding's own subclass
    return type(error).__name__


def probe(device: dict, tmp_path: Path, edit_sysfs: Callable = lambda path: None, **answers):
    """The counter facts of `device` through the real pynvml; `answers`: C symbol -> code."""
    machine = profile_from_snapshot({**SNAPSHOT, "devices": [device]})
    machine["gpus"][0]["answers"].update(answers)
    write_aer(tmp_path, device)
    edit_sysfs(tmp_path)
    with simulated_nvml(machine) as lib:
        pynvml.nvmlInit()
        try:
            h = pynvml.nvmlDeviceGetHandleByIndex(0)
            facts = counters.probe_counters(pynvml, h, device["pci"], nvml.read, sysfs=tmp_path)
        finally:
            pynvml.nvmlShutdown()
    assert not lib.crashes, lib.crashes
    return facts


def node_with(key: str, value) -> list[dict]:
    """Four good H100s, the third with this probed value of one counter fact."""
    devices = synthetic_snapshot(H100, gpus=4)["devices"]
    devices[BAD][key] = value
    return devices


def label(d: dict) -> str:
    return f"GPU {d['index']} ({d['pci']['bus_id']})"


# (NVML call the simulator refuses, the fact it fills, the check that judges it, its args)
READS = [
    ("nvmlDeviceGetNvLinkErrorCounter", "nvlink_errors", checks.test_nvlink_error_counters, 4),
    ("nvmlDeviceGetPcieReplayCounter", "pcie_replays", checks.test_pcie_replays_within_limit, 0),
    ("nvmlDeviceGetMemoryErrorCounter", "ecc_by_location", checks.test_ecc_counts_within_ceilings,
     0),
    ("nvmlDeviceGetGpuFabricInfo", "fabric", checks.test_nvswitch_fabric_registered, 4),
]  # fmt: skip


@pytest.mark.parametrize("error", ERRORS)
@pytest.mark.parametrize(("function", "key", "check", "gpus"), READS, ids=[r[1] for r in READS])
def test_a_library_error_is_an_error_record_and_fails_the_check_naming_the_gpu(
    error, function, key, check, gpus, tmp_path
):
    device = synthetic_snapshot(H100, gpus=1)["devices"][0]
    code, answer = ERRORS[error]
    probed = probe(device, tmp_path, **{function: answer})[key]
    assert is_error(probed), probed
    assert real_error_name(code) in probed["error"], probed
    devices = node_with(key, probed)
    args = [gpus] if gpus else []
    if "facts" in inspect.signature(check).parameters:  # the replay rate reads the uptime
        args.append(Facts({**synthetic_snapshot(H100, gpus=4), "devices": devices}))
    outcome, message, _ = call(check, H100, devices, *args)
    assert outcome == "failed", message
    assert label(devices[BAD]) in message and "could not be read" in message, message


def test_not_supported_nvlink_counters_are_none_and_the_others_still_judged(tmp_path):
    """Blackwell answers NotSupported for the data-link counters: those are not counted."""
    device = synthetic_snapshot(H100, gpus=1)["devices"][0]
    answer = {"nvmlDeviceGetNvLinkErrorCounter": "NOT_SUPPORTED"}
    probed = probe(device, tmp_path, **answer)["nvlink_errors"]
    assert probed and all(
        entry[name] is None for entry in probed for name in counters.NVLINK_COUNTERS
    )
    assert call(checks.test_nvlink_error_counters, H100, node_with("nvlink_errors", probed), 4)[
        :2
    ] == ("passed", "")


def test_an_unreadable_aer_file_is_an_error_record_that_fails_the_check(tmp_path):
    device = synthetic_snapshot(H100, gpus=1)["devices"][0]

    def cut_fatal(sysfs: Path) -> None:  # the total line cut off: a kernel we cannot read
        (sysfs / device["pci"]["bus_id"] / counters.AER_FILES["fatal"]).write_text(
            "DLP 0\nSDES 0\n"
        )

    probed = probe(device, tmp_path, edit_sysfs=cut_fatal)
    assert is_error(probed["pcie_aer"]), probed["pcie_aer"]
    devices = node_with("pcie_aer", probed["pcie_aer"])
    outcome, message, _ = call(checks.test_pcie_aer_within_limits, H100, devices)
    assert outcome == "failed" and label(devices[BAD]) in message, message


@pytest.mark.parametrize("key", list(counters.AER_FILES))
def test_each_aer_count_is_read_from_its_own_file(key, tmp_path):
    device = synthetic_snapshot(H100, gpus=1)["devices"][0]
    device["pcie_aer"] = {"correctable": 0, "nonfatal": 0, "fatal": 0} | {key: 5}
    assert probe(device, tmp_path)["pcie_aer"] == device["pcie_aer"]


# nvml.h: nvmlGpuFabricState_t and nvmlNvLinkErrorCounter_t, through the real binding's
# constants: each state and counter stored under its own name.
def test_each_fabric_state_is_stored_under_its_nvml_name():
    assert counters.FABRIC_STATES == {
        pynvml.NVML_GPU_FABRIC_STATE_NOT_SUPPORTED: "not_supported",
        pynvml.NVML_GPU_FABRIC_STATE_NOT_STARTED: "not_started",
        pynvml.NVML_GPU_FABRIC_STATE_IN_PROGRESS: "in_progress",
        pynvml.NVML_GPU_FABRIC_STATE_COMPLETED: "completed",
    }


@pytest.mark.parametrize(
    ("state", "fails"),
    [("not_supported", False), ("not_started", True), ("in_progress", True),
     ("completed", False), ("unknown_9", True)],
)  # fmt: skip
def test_each_fabric_state_is_judged_entry_by_entry(state, fails):
    """Only COMPLETED is registered; NOT_SUPPORTED is a GPU without NVSwitch (no judgement);
    a state NVML adds later (unknown_N) is not a registration (fail closed)."""
    fabric = {"state": state, "status": 0, "clique_id": 1, "cluster_uuid": "00" * 16}
    devices = node_with("fabric", fabric)
    outcome, message, _ = call(checks.test_nvswitch_fabric_registered, H100, devices, 4)
    assert outcome == ("failed" if fails else "passed"), message


def test_each_nvlink_counter_reads_its_own_nvml_counter():
    assert {name: getattr(pynvml, const) for name, const in counters.NVLINK_COUNTERS.items()} == {
        "replay": pynvml.NVML_NVLINK_ERROR_DL_REPLAY,
        "recovery": pynvml.NVML_NVLINK_ERROR_DL_RECOVERY,
        "crc_flit": pynvml.NVML_NVLINK_ERROR_DL_CRC_FLIT,
        "crc_data": pynvml.NVML_NVLINK_ERROR_DL_CRC_DATA,
    }


def test_each_nvlink_counter_is_stored_under_its_own_name(tmp_path):
    """The simulator answers each nvmlNvLinkErrorCounter_t value (nvml.h order, not rigcheck's
    table) with its own count."""
    device = synthetic_snapshot(H100, gpus=1)["devices"][0]
    for entry in device["nvlink_errors"]:
        entry.update(replay=1, recovery=2, crc_flit=3, crc_data=4)
    probed = probe(device, tmp_path)["nvlink_errors"]
    stored = {"replay": 1, "recovery": 2, "crc_flit": 3, "crc_data": 4}
    assert all({k: e[k] for k in stored} == stored for e in probed), probed


def test_each_aer_count_is_read_from_the_kernels_file_of_that_name():
    """The kernel's names, not rigcheck's table (write_aer above writes by that table, so a swap
    there would round-trip unseen): Linux Documentation/ABI/testing/
    sysfs-bus-pci-devices-aer_stats names aer_dev_correctable, aer_dev_nonfatal, aer_dev_fatal."""
    assert counters.AER_FILES == {
        "correctable": "aer_dev_correctable",
        "nonfatal": "aer_dev_nonfatal",
        "fatal": "aer_dev_fatal",
    }
