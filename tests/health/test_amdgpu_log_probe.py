"""amdgpu's fault lines in the kernel log, as the amdgpu driver prints them (its format strings
are cited in rigcheck/facts/kernel_log/amdgpu.py): each kept with its GPU and time, sorted into
machine, driver and application faults; the all-clear and other amdgpu lines are not events;
the window and the unreadable-log record are the Xid probe's."""

import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rigcheck.facts.kernel_log import amdgpu as amdgpu_log
from rigcheck.facts.kernel_log import reader as kernel_log

UE_UMC = (
    "[ 3600.250000] amdgpu 0000:75:00.0: amdgpu: 2 uncorrectable hardware errors detected in "
    "umc block"
)
FATAL = (
    "[  918.654913] amdgpu 0000:15:00.0: {1}uncorrectable hardware error"
    "(ERREVENT_ATHUB_INTERRUPT) detected!"
)
BOOT = "[    0.000000] Linux version 6.8.0-45-generic"


@pytest.mark.parametrize(
    ("line", "name", "cause"),
    [
        (UE_UMC, "ras_uncorrectable", "machine"),
        (
            "amdgpu 0000:75:00.0: amdgpu: {12} socket: 0, die: 1, 3 new uncorrectable hardware "
            "errors detected in gfx block",
            "ras_uncorrectable",
            "machine",
        ),
        (FATAL, "ras_fatal", "machine"),
        (
            "amdgpu 0000:75:00.0: amdgpu: RAS records:117 exceeds 90% of threshold:128",
            "bad_pages_threshold",
            "machine",
        ),
        ("amdgpu 0000:75:00.0: amdgpu: GPU reset(3) failed", "reset_failed", "machine"),
        (
            "amdgpu 0000:75:00.0: [drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx_0.0.0 "
            "timeout, signaled seq=1113, emitted seq=1115",
            "ring_timeout",
            "driver",
        ),
        ("amdgpu 0000:75:00.0: amdgpu: GPU reset begin!", "gpu_reset", "driver"),
        (
            "amdgpu 0000:75:00.0: amdgpu: ring comp_1.0.0 timeout, but soft recovered",
            "soft_recovered",
            "application",
        ),
        (
            "amdgpu 0000:75:00.0: amdgpu: [gfxhub0] no-retry page fault (src_id:0 ring:24 "
            "vmid:8 pasid:32770)",
            "page_fault",
            "application",
        ),
    ],
)
def test_each_documented_line_is_classified(line, name, cause):
    event = amdgpu_log.parse_amdgpu(line)
    assert event is not None and event["bus_id"] in ("0000:75:00.0", "0000:15:00.0")
    kind = amdgpu_log.classify(event["text"])
    assert (kind.name, kind.cause) == (name, cause)


@pytest.mark.parametrize(
    "line",
    [
        "amdgpu 0000:c3:00.0: amdgpu: no uncorrectable hardware errors detected in umc block",
        "amdgpu 0000:c3:00.0: amdgpu: 0 uncorrectable hardware errors detected in umc block",
        "amdgpu 0000:c3:00.0: amdgpu: 5 correctable hardware errors detected in umc block",
        "amdgpu 0000:c3:00.0: amdgpu: GPU reset(2) succeeded!",
        "amdgpu 0000:c3:00.0: amdgpu: SMU is initialized successfully!",
        "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.",
    ],
)
def test_healthy_and_other_lines_are_not_events(line):
    assert amdgpu_log.parse_amdgpu(line) is None


def test_the_time_and_bus_are_kept():
    assert amdgpu_log.parse_amdgpu(UE_UMC) == {
        "t_s": 3600.25,
        "bus_id": "0000:75:00.0",
        "text": "amdgpu: 2 uncorrectable hardware errors detected in umc block",
    }


def _dmesg(monkeypatch, lines, uptime=7200.0):
    def refuse(path=None):
        raise PermissionError(1, "Operation not permitted", "/dev/kmsg")

    monkeypatch.setattr(kernel_log, "_kmsg", refuse)
    monkeypatch.setattr(kernel_log, "_uptime", lambda: uptime)
    answers = {"dmesg": (0, "\n".join(lines) + "\n", "")}

    def run(argv):
        if argv[0] not in answers:
            raise FileNotFoundError(2, "No such file or directory", argv[0])
        return subprocess.CompletedProcess(argv, *answers[argv[0]])

    return run


def test_the_probe_reads_amdgpu_lines_beside_xids(monkeypatch):
    run = _dmesg(monkeypatch, [BOOT, UE_UMC, FATAL])
    log = kernel_log.probe_kernel_log(run)
    assert log["source"] == "dmesg" and log["xid_count"] == 0
    assert log["amdgpu_count"] == 2
    assert [e["bus_id"] for e in log["amdgpu_events"]] == ["0000:75:00.0", "0000:15:00.0"]


def test_the_window_drops_older_amdgpu_lines(monkeypatch):
    run = _dmesg(monkeypatch, [BOOT, FATAL, UE_UMC], uptime=4000.0)
    log = kernel_log.probe_kernel_log(run, window_s=1000)  # since 3000 s after boot
    assert [e["t_s"] for e in log["amdgpu_events"]] == [3600.25]


def test_an_unreadable_log_is_an_error_record_not_no_events(monkeypatch):
    _dmesg(monkeypatch, [BOOT])  # /dev/kmsg refused, uptime known
    refused = {"dmesg": (1, "", "dmesg: read kernel buffer failed: Operation not permitted")}

    def denied(argv):
        if argv[0] not in refused:
            raise FileNotFoundError(2, "No such file or directory", argv[0])
        return subprocess.CompletedProcess(argv, *refused[argv[0]])

    log = kernel_log.probe_kernel_log(denied)
    assert "error" in log and "amdgpu_events" not in log
    assert "Operation not permitted" in log["error"]


@given(st.text(max_size=300))
def test_any_line_parses_or_is_none_never_raises(line):
    event = amdgpu_log.parse_amdgpu(line)
    assert event is None or amdgpu_log.classify(event["text"]) is not None


@given(
    count=st.integers(min_value=1, max_value=10**9),
    block=st.sampled_from(["umc", "gfx", "sdma", "mmhub", "xgmi_wafl", "UMC"]),
    bus=st.from_regex(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", fullmatch=True),
)
def test_every_uncorrectable_count_is_a_machine_fault_and_zero_is_not(count, block, bus):
    line = f"amdgpu {bus}: amdgpu: {{}} uncorrectable hardware errors detected in {block} block"
    event = amdgpu_log.parse_amdgpu(line.format(count))
    assert event["bus_id"] == bus
    assert amdgpu_log.classify(event["text"]).cause == "machine"
    assert amdgpu_log.parse_amdgpu(line.format(0)) is None
