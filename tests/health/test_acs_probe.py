"""The ACS probe on a fake /sys: PCI devices under sys/devices/pci0000:00/<root port>/<switch
ports>/<GPU>, linked from sys/bus/pci/devices as Linux links them, with a config file holding
the extended capability list a switch port has (AER first, then ACS), or the 64 bytes Linux
gives a reader that is not root."""

import os
import struct

import pytest

from rigcheck.facts.host.acs import acs_control, probe_acs

ROOT_PORT, UPSTREAM = "0000:00:01.0", "0000:16:00.0"
GPUS = {"0000:18:00.0": "0000:17:00.0", "0000:2a:00.0": "0000:17:08.0"}  # GPU -> its switch port


def config(acs_ctrl=None, size=4096):
    """A switch port's config space: AER at 0x100, then ACS at 0x148 (if acs_ctrl is given)."""
    data = bytearray(4096)
    nxt = 0x148 if acs_ctrl is not None else 0
    struct.pack_into("<I", data, 0x100, 0x0001 | 1 << 16 | nxt << 20)  # AER, version 1
    if acs_ctrl is not None:
        struct.pack_into("<IHH", data, 0x148, 0x000D | 1 << 16, 0x5F, acs_ctrl)
    return bytes(data[:size])


def fake_sys(root, ctrl=0, size=4096):
    """Root port (ACS on, as Linux sets it; not judged) -> switch upstream port (no ACS) ->
    one downstream port per GPU, whose ACS Control is `ctrl`."""
    pci = root / "sys/bus/pci/devices"
    pci.mkdir(parents=True)
    top = root / "sys/devices/pci0000:00" / ROOT_PORT
    blobs = {top: config(0x1D, size), top / UPSTREAM: config(None, size)}
    for gpu, port in GPUS.items():
        blobs[top / UPSTREAM / port] = config(ctrl, size)
        blobs[top / UPSTREAM / port / gpu] = bytes(64)
    for path, blob in blobs.items():
        path.mkdir(parents=True, exist_ok=True)
        (path / "config").write_bytes(blob)
        (path / "numa_node").write_text("0\n")
        os.symlink(path, pci / path.name)
    return pci


DEVICES = [{"index": i, "pci": {"bus_id": bus.upper()}} for i, bus in enumerate(GPUS)]


def test_redirect_bits_on_a_switch_port_are_named(tmp_path):
    fake_sys(tmp_path, ctrl=0x1D)  # SrcValid+ ReqRedir+ CmpltRedir+ UpstreamFwd+, as Linux sets
    ports = probe_acs(DEVICES, tmp_path)["ports"]
    assert [p["bus_id"] for p in ports] == [UPSTREAM, "0000:17:00.0", "0000:17:08.0"]
    assert ports[0] == {"bus_id": UPSTREAM, "devices": ["GPU 0", "GPU 1"], "control": None,
                        "redirect": []}  # fmt: skip
    assert ports[1] == {"bus_id": "0000:17:00.0", "devices": ["GPU 0"], "control": 0x1D,
                        "redirect": ["ReqRedir", "CmpltRedir"]}  # fmt: skip


def test_acs_off_and_a_port_without_acs_redirect_nothing(tmp_path):
    fake_sys(tmp_path, ctrl=0x0)
    ports = probe_acs(DEVICES, tmp_path)["ports"]
    assert [(p["control"], p["redirect"]) for p in ports] == [(None, []), (0, []), (0, [])]


def test_a_port_without_the_capability_has_control_none(tmp_path):
    fake_sys(tmp_path, ctrl=None)
    assert [p["control"] for p in probe_acs(DEVICES, tmp_path)["ports"]] == [None, None, None]


def test_without_root_the_probe_says_why_and_how_to_read_it(tmp_path):
    fake_sys(tmp_path, ctrl=0x1D, size=64)  # what Linux gives a reader without CAP_SYS_ADMIN
    reason = probe_acs(DEVICES, tmp_path)["error"]
    assert "only to root" in reason and "sudo lspci -vvv | grep ACSCtl" in reason


def test_the_root_port_is_not_judged(tmp_path):
    fake_sys(tmp_path, ctrl=0x4)  # the root port has ReqRedir+ CmpltRedir+: Linux's own setting
    ports = probe_acs(DEVICES[:1], tmp_path)["ports"]
    assert [p["bus_id"] for p in ports] == [UPSTREAM, "0000:17:00.0"]
    assert ports[1]["redirect"] == ["ReqRedir"]


@pytest.mark.parametrize(
    "blob",
    [b"", bytes(4096), b"\xff" * 4096, bytes(256)],
    ids=["empty", "no-extended-caps", "device-gone", "conventional-pci"],
)
def test_config_space_without_acs_is_none_or_an_error_never_a_raise(blob):
    assert acs_control(blob) is None


def test_a_looping_capability_list_ends():
    data = bytearray(4096)
    struct.pack_into("<I", data, 0x100, 0x0001 | 0x100 << 20)  # next points at itself
    assert acs_control(bytes(data)) is None


def test_missing_sysfs_and_odd_devices_are_error_records_or_nothing(tmp_path):
    assert "error" in probe_acs(DEVICES, tmp_path)
    assert probe_acs([{"index": 0, "pci": {"error": "lost"}}, "junk"], tmp_path) == {"ports": []}


def test_the_live_probe_never_raises():
    result = probe_acs([])
    assert result == {"ports": []} or "error" in result
