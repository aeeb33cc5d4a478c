"""The counter probe against a fake NVML and sysfs: NotSupported is None, a refused read is an
error record naming it, and one bad counter never costs the device's other facts."""

from types import SimpleNamespace

import pytest
from counter_fakes import NVML_CONSTANTS, NotSupported, add_counter_fakes, write_aer

from rigcheck.facts import counters, nvml
from rigcheck.facts.synthetic import synthetic_snapshot
from rigcheck.spec import load_spec


class NoPermission(Exception):
    pass


def fake_nvml(device):
    links = device["nvlink_errors"] or []
    module = SimpleNamespace(
        **NVML_CONSTANTS,
        nvmlDeviceGetNvLinkState=lambda h, link: 1 if link < len(links) else _raise(Exception()),
    )
    return add_counter_fakes(module, device)


def _raise(exc):
    raise exc


def probe(device, module, tmp_path, monkeypatch):
    monkeypatch.setattr(nvml, "_nvml", lambda: module)
    write_aer(tmp_path, device)
    return counters.probe_counters(module, 0, device["pci"], nvml.read, sysfs=tmp_path)


@pytest.fixture
def h100():
    return synthetic_snapshot(load_spec("h100"), gpus=1)["devices"][0]


def test_a_healthy_device_reads_back(h100, tmp_path, monkeypatch):
    facts = probe(h100, fake_nvml(h100), tmp_path, monkeypatch)
    assert facts == {k: h100[k] for k in facts}


def test_not_supported_is_none_and_permission_denied_is_an_error(h100, tmp_path, monkeypatch):
    """A vGPU guest: NotSupported for the replay counter; NoPermission for the InfoROM."""
    module = fake_nvml(h100)
    module.nvmlDeviceGetPcieReplayCounter = lambda h: _raise(NotSupported())
    module.nvmlDeviceGetInforomImageVersion = lambda h: _raise(
        NoPermission("Insufficient Permissions")
    )
    facts = probe(h100, module, tmp_path, monkeypatch)
    assert facts["pcie_replays"] is None
    assert facts["firmware"] == {"error": "NoPermission: Insufficient Permissions"}
    assert facts["temperature_thresholds"] == h100["temperature_thresholds"]


def test_blackwell_nvlink_counters_not_counted_are_none(h100, tmp_path, monkeypatch):
    module = fake_nvml(h100)
    module.nvmlDeviceGetNvLinkErrorCounter = lambda h, link, c: _raise(NotSupported())
    links = probe(h100, module, tmp_path, monkeypatch)["nvlink_errors"]
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


def test_clock_limits_not_supported_per_id_all_or_refused(h100, tmp_path, monkeypatch):
    """GeForce answers Not Supported for every clock id (the whole fact is None); a board may
    lack one id; a vGPU guest may refuse the call (an error record naming it)."""
    module = fake_nvml(h100)
    module.nvmlDeviceGetClock = lambda h, c, i: _raise(NotSupported())
    assert probe(h100, module, tmp_path, monkeypatch)["clock_limits"] is None
    h100["clock_limits"]["sm_app_target_mhz"] = None
    limits = probe(h100, fake_nvml(h100), tmp_path, monkeypatch)["clock_limits"]
    assert limits["sm_app_target_mhz"] is None and limits["sm_customer_boost_max_mhz"] == 1980
    module = fake_nvml(h100)
    module.nvmlDeviceGetClock = lambda h, c, i: _raise(NoPermission("Insufficient Permissions"))
    limits = probe(h100, module, tmp_path, monkeypatch)["clock_limits"]
    assert limits == {"error": "NoPermission: Insufficient Permissions"}
