"""The counter probe through the real pynvml over a simulated libnvidia-ml
(rigcheck/testing/nvml_sim) and
a fake sysfs: NotSupported is None, a refused read is an error record naming it, and one bad
counter never costs the device's other facts."""

import pynvml
import pytest
from counter_fakes import write_aer

from rigcheck.facts.nvidia import counters, nvml
from rigcheck.spec import load_spec
from rigcheck.testing.nvml_sim import simulated_nvml
from rigcheck.testing.nvml_sim.from_facts import profile_from_snapshot
from rigcheck.testing.synthetic import synthetic_snapshot


def probe(device, tmp_path, **answers):
    """The counter facts of `device` as the probe reads them; `answers`: C symbol -> code."""
    machine = profile_from_snapshot({**SNAPSHOT, "devices": [device]})
    machine["gpus"][0]["answers"].update(answers)
    write_aer(tmp_path, device)
    with simulated_nvml(machine) as lib:
        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        facts = counters.probe_counters(pynvml, h, device["pci"], nvml.read, sysfs=tmp_path)
        pynvml.nvmlShutdown()
    assert not lib.crashes, lib.crashes
    return facts


SNAPSHOT = synthetic_snapshot(load_spec("h100"), gpus=1)


@pytest.fixture
def h100():
    return synthetic_snapshot(load_spec("h100"), gpus=1)["devices"][0]


def test_a_healthy_device_reads_back(h100, tmp_path):
    facts = probe(h100, tmp_path)
    assert facts == {k: h100[k] for k in facts}


def test_not_supported_is_none_and_permission_denied_is_an_error(h100, tmp_path):
    """A vGPU guest: NotSupported for the replay counter; NoPermission for the InfoROM."""
    facts = probe(
        h100,
        tmp_path,
        nvmlDeviceGetPcieReplayCounter="NOT_SUPPORTED",
        nvmlDeviceGetInforomImageVersion="NO_PERMISSION",
    )
    assert facts["pcie_replays"] is None
    assert facts["firmware"] == {"error": "NVMLError_NoPermission: Insufficient Permissions"}
    assert facts["temperature_thresholds"] == h100["temperature_thresholds"]


def test_blackwell_nvlink_counters_not_counted_are_none(h100, tmp_path):
    links = probe(h100, tmp_path, nvmlDeviceGetNvLinkErrorCounter="NOT_SUPPORTED")["nvlink_errors"]
    assert len(links) == 18 and links[0] == {"link": 0, "replay": None, "recovery": None,
                                             "crc_flit": None, "crc_data": None}  # fmt: skip


def test_aer_absent_is_none_and_unreadable_is_an_error(h100, tmp_path):
    bus = h100["pci"]["bus_id"]
    (tmp_path / bus).mkdir()
    assert counters._aer(tmp_path, bus) is None  # no aer_dev_* files: AER statistics off
    (tmp_path / bus / "aer_dev_correctable").write_text("RxErr 0\n")  # no TOTAL line
    assert "no TOTAL_ERR_" in counters._aer(tmp_path, bus)["error"]
    assert "does not exist" in counters._aer(tmp_path, "0000:ff:00.0")["error"]
    assert "no PCI bus id" in counters._aer(tmp_path, None)["error"]


def test_aer_totals_are_read_from_the_kernels_format(h100, tmp_path):
    h100["pcie_aer"] = {"correctable": 7, "nonfatal": 2, "fatal": 1}
    write_aer(tmp_path, h100)
    assert counters._aer(tmp_path, h100["pci"]["bus_id"]) == h100["pcie_aer"]


def test_clock_limits_not_supported_per_id_all_or_refused(h100, tmp_path):
    """GeForce answers Not Supported for every clock id (the whole fact is None); a board may
    lack one id; a vGPU guest may refuse the call (an error record naming it)."""
    assert probe(h100, tmp_path, nvmlDeviceGetClock="NOT_SUPPORTED")["clock_limits"] is None
    h100["clock_limits"]["sm_app_target_mhz"] = None
    limits = probe(h100, tmp_path)["clock_limits"]
    assert limits["sm_app_target_mhz"] is None and limits["sm_customer_boost_max_mhz"] == 1980
    limits = probe(h100, tmp_path, nvmlDeviceGetClock="NO_PERMISSION")["clock_limits"]
    assert limits == {"error": "NVMLError_NoPermission: Insufficient Permissions"}
