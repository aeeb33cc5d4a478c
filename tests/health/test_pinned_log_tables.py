"""The kernel-log checks pinned entry by entry and at their edges (tests/mutation/realistic/
logs.toml): every Xid code both a peer (Azure) and NVIDIA's catalogue call a machine fault
fails here, naming the GPU it was logged for; codes NVIDIA buckets RESTART_APP or IGNORE are
warnings, Azure's included; an unknown code fails; every amdgpu pattern is matched by
the driver's own line and sorted as the driver means it; a storm keeps its newest events; an
event without a timestamp is never dropped by a window; an event at the start of the burn-in is
in it.
"""

from __future__ import annotations

import importlib
import time

import pytest
from check_calls import call
from test_xid_probe import BOOT, FakeRunner

from rigcheck.facts import Facts
from rigcheck.facts.kernel_log import amdgpu as amdgpu_log
from rigcheck.facts.kernel_log import reader as kernel_log
from rigcheck.facts.kernel_log import xid_events as xid
from rigcheck.spec import load_spec
from rigcheck.testing.synthetic import synthetic_snapshot

checks = importlib.import_module("suites.facts.test_kernel_log")
BAD = 2

# Azure HPC health checks (Azure/azurehpc-health-checks, customTests/azure_gpu_xid.nhc):
# `readonly XID_EC="48 56 57 58 62 63 64 65 68 69 73 74 79 80 81 92 119 120"`, the codes that
# fail a node. Transcribed by hand, not read from rigcheck's own copy. rigcheck follows NVIDIA's
# Xid catalogue where the two differ (rigcheck/facts/kernel_log/xid_catalog.py, since issue 23),
# so the
# Azure list splits by NVIDIA's "Resolution Bucket (Immediate Action)", checked code by code in
# leptonai/gpud components/accelerator/nvidia/xid/catalog_generated.go @b9842de (generated from
# https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html), again by hand:
# - a machine action (RESET_GPU, RESTART_BM, CONTACT_SUPPORT, WORKFLOW_XID_48,
#   WORKFLOW_NVLINK_ERR): these fail here as on Azure;
AZURE_FAILS = (48, 56, 57, 58, 62, 64, 65, 73, 74, 79, 81, 119, 120)
# - IGNORE (63 row remapping event, 92 high single-bit ECC rate) or RESTART_APP (68 NVDEC0
#   exception, 69 graphics engine class error, 80 corrupted data sent to GPU): reported as a
#   warning, not failed; the remap and ECC counter checks (counters.py) judge the memory itself.
AZURE_BUT_NOT_NVIDIA = (63, 68, 69, 80, 92)
# NVIDIA's Xid catalogue, "Resolution Bucket (Immediate Action)": RESTART_APP for 13 (Graphics
# Engine Exception) and 31 (MMU fault), IGNORE for 43 (reset channel verif), WORKFLOW_XID_45
# for 45 (preemptive channel removal): what a user application causes. Warnings, not faults.
APPLICATION = (13, 31, 43, 45)
# Uncorrectable ECC errors the GPU did not contain (95) or did not recover (140): RESET_GPU in
# NVIDIA's catalogue. Faults. The contained one (94) is RESTART_APP there (one application was
# stopped; the row remap it needs is judged by the remap counters): a warning.
ECC_FAULTS = (95, 140)
ECC_CONTAINED = (94,)
DRIVER_FAULTS = (61, 109)  # PMU breakpoint, context switch timeout: a reset clears them
UNKNOWN = (1, 999)  # unused in the catalogue, and a code no driver logs today


def node_with_xid(code: int) -> tuple:
    spec = load_spec("h100")
    data = synthetic_snapshot(spec, gpus=4)
    devices = data["devices"]
    bus = devices[BAD]["pci"]["bus_id"]  # "0000:xx:00.0": the driver prints it without ".0"
    data["kernel_log"]["xid_events"] = [
        {"t_s": 100.0, "bus_id": bus, "code": code, "pid": 7, "text": f"{code}, pid=7, text"}
    ]
    data["kernel_log"]["xid_count"] = 1
    return spec, Facts(data), devices


def label(d: dict) -> str:
    return f"GPU {d['index']} ({d['pci']['bus_id']})"


@pytest.mark.parametrize("code", AZURE_FAILS + ECC_FAULTS + DRIVER_FAULTS + UNKNOWN)
def test_each_fault_code_fails_naming_the_gpu_it_was_logged_for(code):
    spec, facts, devices = node_with_xid(code)
    outcome, message, _ = call(checks.test_no_machine_fault_xids, spec, facts, devices)
    assert outcome == "failed", message
    assert f"Xid {code} x1 on {label(devices[BAD])}" in message, message
    assert not any(label(d) in message for i, d in enumerate(devices) if i != BAD), message


@pytest.mark.parametrize("code", APPLICATION + AZURE_BUT_NOT_NVIDIA + ECC_CONTAINED)
def test_each_application_code_is_a_warning_not_a_failure(code):
    spec, facts, devices = node_with_xid(code)
    outcome, message, warned = call(checks.test_no_machine_fault_xids, spec, facts, devices)
    assert (outcome, warned) == ("passed", ["UserWarning"]), message


# One line per catalogue entry, in the words the amdgpu driver prints them (Linux
# drivers/gpu/drm/amd/amdgpu/: amdgpu_ras.c, amdgpu_ras_eeprom.c, amdgpu_job.c, amdgpu_device.c,
# gmc_v9_0.c), with the verdict each must give. The format strings are the driver's; the numbers
# in them are written by hand.
AMDGPU_LINES = {
    "ras_uncorrectable": ("2 uncorrectable hardware errors detected in umc block", True),
    "ras_fatal": ("{1} Uncorrectable hardware error(ERREVENT_ATHUB_INTERRUPT) detected!", True),
    "bad_pages_threshold": ("RAS records:230 exceed threshold:230", True),
    "reset_failed": ("GPU reset(2) failed", True),
    # kfd_int_process_v9.c's format string, with RAS_EVENT_LOG's event id (no public report of
    # the line was found: written from the driver source, as AMD's node-scraper tests it)
    "ras_poison": ("{14}poison is consumed by client 12, kick off gpu reset flow", True),
    # Two real lines (fixtures/realworld/kernel_log.json): ROCm/legacy-rocm-build#4021 (MI300X)
    # and pop-os/cosmic-epoch#3764 (RX 5700 XT).
    "aca_hardware_error": (
        "{1}[Hardware Error]: Accelerator Check Architecture events logged",
        True,
    ),
    "ring_reset_failed": ("Ring gfx_0.0.0 reset failed", True),
    "ring_timeout": ("ring gfx_0.0.0 timeout, signaled seq=1204, emitted seq=1206", True),
    "gpu_reset": ("GPU reset begin!", True),
    # Issue 36's entries: MES, resets during a run, VRAM lost, wedged, init, illegal opcodes
    # (real lines of these kinds are in fixtures/realworld/kernel_log.json).
    "mes_failed": ("MES failed to respond to msg=REMOVE_QUEUE", True),
    "vram_lost": ("VRAM is lost due to GPU reset!", True),
    "device_wedged": ("[drm] device wedged, but recovered through reset", True),
    "init_failed": ("Fatal error during GPU init", True),
    "mode_reset": ("MODE2 reset", True),  # no bring-up before it: a reset during a run
    "illegal_command": ("Illegal opcode in command stream", False),
    "soft_recovered": ("ring comp_1.0.0 timeout, but soft recovered", False),
    "page_fault": (
        "[gfxhub0] retry page fault (src_id:0 ring:0 vmid:8 pasid:32769, for process python "
        "pid 4113 thread python pid 4113)",
        False,
    ),
}


def test_the_line_table_covers_every_catalogue_entry():
    assert set(AMDGPU_LINES) == {entry.name for entry in amdgpu_log.CATALOGUE}


@pytest.mark.parametrize("name", AMDGPU_LINES)
def test_each_amdgpu_line_is_classified_and_judged_as_the_driver_means_it(name):
    text, fails = AMDGPU_LINES[name]
    assert amdgpu_log.classify(text).name == name
    spec = load_spec("mi300x")
    data = synthetic_snapshot(spec, gpus=4)
    devices = data["devices"]
    bus = devices[BAD]["pci"]["bus_id"]
    data["kernel_log"]["amdgpu_events"] = [{"t_s": 5.0, "bus_id": bus, "text": text}]
    outcome, message, _ = call(checks.test_no_amdgpu_faults, spec, Facts(data), devices)
    assert outcome == ("failed" if fails else "passed"), message
    if fails:
        assert label(devices[BAD]) in message, message


@pytest.mark.parametrize(
    "text",
    [
        "no uncorrectable hardware errors detected in umc block",  # amdgpu's all-clear
        "0 uncorrectable hardware errors detected in umc block",
        "0 new uncorrectable hardware errors detected in total in gfx block",
    ],
)
def test_amdgpus_all_clear_lines_are_not_faults(text):
    assert amdgpu_log.classify(text) is None


@pytest.mark.parametrize(
    ("text", "name"),
    [  # other spellings of the same faults, from the driver's format strings
        ("Saved bad pages(130) reaches threshold value(128).", "bad_pages_threshold"),
        ("{15}Poison is created", "ras_poison"),
        ("Mode2 reset failed", "reset_failed"),
    ],
)
def test_other_spellings_amdgpu_prints_are_read_as_the_same_fault(text, name):
    assert amdgpu_log.classify(text).name == name


# ---- edges of storms and windows ----


def xid_line(t: float | None, code: int) -> str:
    stamp = "" if t is None else f"[{t:12.6f}] "
    return f"{stamp}gpu01 kernel: NVRM: Xid (PCI:0000:3b:00): {code}, pid=1, name=python, x"


def test_a_storm_keeps_its_newest_events_and_counts_them_all(monkeypatch):
    monkeypatch.setattr(kernel_log, "_uptime", lambda: 9000.0)
    lines = [xid_line(10.0 + i, 13) for i in range(kernel_log.MAX_EVENTS + 50)]
    lines.append(xid_line(8000.0, 79))  # the fault that matters comes last
    log = kernel_log._events("dmesg", lines, None)
    assert log["xid_count"] == kernel_log.MAX_EVENTS + 51
    assert len(log["xid_events"]) == kernel_log.MAX_EVENTS
    assert log["xid_events"][-1]["code"] == 79
    assert log["xid_events"][0]["t_s"] == 10.0 + 51


def test_an_amdgpu_storm_keeps_its_newest_events(monkeypatch):
    monkeypatch.setattr(kernel_log, "_uptime", lambda: 9000.0)
    soft = "amdgpu 0000:75:00.0: amdgpu: ring comp_1.0.0 timeout, but soft recovered"
    lines = [f"[{10.0 + i:12.6f}] {soft}" for i in range(kernel_log.MAX_EVENTS + 5)]
    lines.append("[ 8000.000000] amdgpu 0000:75:00.0: amdgpu: GPU reset(3) failed")
    log = kernel_log._events("dmesg", lines, None)
    assert log["amdgpu_count"] == kernel_log.MAX_EVENTS + 6
    assert log["amdgpu_events"][-1]["text"] == "amdgpu: GPU reset(3) failed"


def test_a_window_keeps_an_event_it_cannot_place_in_time(monkeypatch):
    """A line without a timestamp may be inside the window: it is judged, never dropped."""
    monkeypatch.setattr(kernel_log, "_uptime", lambda: 9000.0)
    lines = [xid_line(100.0, 48), xid_line(None, 79), xid_line(8990.0, 13)]
    log = kernel_log._events("dmesg", lines, 60)
    assert [e["code"] for e in log["xid_events"]] == [79, 13]


def test_an_event_stamped_at_the_start_of_the_burn_in_is_in_it(monkeypatch):
    monkeypatch.setattr(kernel_log, "_uptime", lambda: 7200.0)
    monkeypatch.setattr(time, "time", lambda: 1_000_000.0)
    run = FakeRunner({"journalctl": (0, "\n".join((BOOT, xid_line(7100.0, 79))) + "\n", "")})
    start = 1_000_000.0 - 100.0  # the load began exactly when the Xid was logged
    assert [e["code"] for e in xid.xid_events(start, run)] == [79]
