"""The Xid probe against fakes of journalctl, /dev/kmsg and dmesg as they answer with and
without root: a value, or an error record naming every refusal, never a crash or an empty list."""

import os
import subprocess

import pytest

from rigcheck.facts.kernel_log import reader as kernel_log
from rigcheck.facts.kernel_log.xid_catalog import CATALOG, judge, lookup

XID_79 = (
    "[ 3600.250000] gpu01 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, "
    "GPU has fallen off the bus."
)
BOOT = "[    0.000000] gpu01 kernel: Linux version 5.15.0-126-generic"
# journalctl as a user outside the systemd-journal group: exit 0, no kernel lines, a hint.
JOURNAL_HINT = (
    "Hint: You are currently not seeing messages from other users and the system.\n"
    "      Users in groups 'adm', 'systemd-journal' can see all messages."
)


class FakeRunner:
    """Answers each command as the real one would; a missing one raises FileNotFoundError."""

    def __init__(self, answers):
        self.answers = answers

    def __call__(self, argv):
        answer = self.answers.get(argv[0])
        if answer is None:
            raise FileNotFoundError(2, "No such file or directory", argv[0])
        rc, out, err = answer
        return subprocess.CompletedProcess(argv, rc, out, err)


@pytest.fixture
def no_kmsg(monkeypatch):
    """/dev/kmsg with kernel.dmesg_restrict=1 and no CAP_SYSLOG."""

    def refuse(path=None):
        raise PermissionError(1, "Operation not permitted", "/dev/kmsg")

    monkeypatch.setattr(kernel_log, "_kmsg", refuse)
    monkeypatch.setattr(kernel_log, "_uptime", lambda: 7200.0)


@pytest.mark.parametrize(
    ("line", "bus", "code", "pid"),
    [
        (XID_79, "0000:3b:00.0", 79, 1234),
        ("[  269.5] NVRM: Xid (0000:01:00): 3, C 00000005 SC 00000007", "0000:01:00.0", 3, None),
        (
            "NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row",
            "0000:10:1c.0",
            63,
            1896,
        ),
        ("NVRM: Xid (PCI:00000000:AB:00): 48, pid=<unknown>, DBE", "0000:ab:00.0", 48, None),
    ],
)
def test_xid_lines_in_the_formats_drivers_write(line, bus, code, pid):
    event = kernel_log.parse_xid(line)
    assert (event["bus_id"], event["code"], event["pid"]) == (bus, code, pid)


def test_lines_that_are_not_xid_events_are_ignored():
    assert kernel_log.parse_xid(BOOT) is None
    assert kernel_log.parse_xid("NVRM: GPU at PCI:0000:2b:00: GPU-0b11d014") is None


def test_journal_read_as_root_finds_the_event(no_kmsg):
    run = FakeRunner({"journalctl": (0, f"{BOOT}\n{XID_79}\n", "")})
    log = kernel_log.probe_kernel_log(run)
    assert log["source"] == "journalctl -k -b" and log["xid_count"] == 1
    assert log["xid_events"][0]["code"] == 79


def test_a_refused_journal_falls_through_to_dmesg(no_kmsg):
    run = FakeRunner(
        {"journalctl": (0, "-- No entries --\n", JOURNAL_HINT), "dmesg": (0, XID_79, "")}
    )
    log = kernel_log.probe_kernel_log(run)
    assert log["source"] == "dmesg" and log["xid_events"][0]["bus_id"] == "0000:3b:00.0"


def test_without_root_every_refusal_is_in_the_error_record(no_kmsg):
    run = FakeRunner(
        {
            "journalctl": (1, "", "No journal files were found."),
            "dmesg": (1, "", "dmesg: read kernel buffer failed: Operation not permitted"),
        }
    )
    log = kernel_log.probe_kernel_log(run)
    assert set(log) == {"error"}
    for reason in ("journalctl", "/dev/kmsg", "Operation not permitted", "systemd-journal"):
        assert reason in log["error"]


def test_an_empty_log_is_not_read_as_no_xids(no_kmsg):
    """A container's dmesg can answer with nothing at all: that is no access, not a clean log."""
    log = kernel_log.probe_kernel_log(FakeRunner({"dmesg": (0, "", "")}))
    assert set(log) == {"error"} and "no lines" in log["error"]


def test_the_window_keeps_only_recent_events(no_kmsg):
    old = XID_79.replace("3600.250000", "100.000000")
    run = FakeRunner({"journalctl": (0, f"{old}\n{XID_79}\n", "")})
    log = kernel_log.probe_kernel_log(run, window_s=3700)  # uptime 7200: since t = 3500
    assert log["window_s"] == 3700 and [e["t_s"] for e in log["xid_events"]] == [3600.25]


@pytest.mark.parametrize(
    ("text", "seconds"), [("2h", 7200), ("30m", 1800), ("900", 900), ("boot", None), (None, None)]
)
def test_window_values(text, seconds):
    assert kernel_log.parse_window(text) == seconds


@pytest.mark.parametrize("text", ["2x", "-1h", "0", "soon"])
def test_a_bad_window_says_what_to_write(text):
    with pytest.raises(ValueError, match=r"write e\.g\. 2h"):
        kernel_log.parse_window(text)


def test_a_bad_window_in_the_environment_is_the_facts_error(monkeypatch):
    monkeypatch.setenv(kernel_log.WINDOW_ENV, "yesterday")
    record = kernel_log.window_from_env(lambda w: pytest.fail("probe ran"), None)
    assert set(record) == {"error"} and "RIGCHECK_XID_WINDOW" in record["error"]


def test_kmsg_records_read_as_dmesg_lines(tmp_path, monkeypatch):
    records = [b"6,1,0,-;Linux version 5.15", b"3,2,3600250000,-;NVRM: Xid (PCI:0000:3b:00): 79, x"]
    reads = iter([*records, BlockingIOError()])

    def fake_read(fd, size):
        item = next(reads)
        if isinstance(item, Exception):
            raise item
        return item

    monkeypatch.setattr(os, "open", lambda path, flags: 99)
    monkeypatch.setattr(os, "close", lambda fd: None)
    monkeypatch.setattr(os, "read", fake_read)
    lines = kernel_log._kmsg()
    assert lines[1].startswith("<3>[3600.250000] NVRM: Xid")  # its level kept, as `dmesg -r`
    assert kernel_log.parse_xid(lines[1])["t_s"] == 3600.25


def test_every_code_of_nvidias_catalogue_is_held():
    """NVIDIA's Ampere-and-later catalogue runs 1-172 (xid_table.py); the issue named 32, 38,
    144, 145 and 149 as missing."""
    assert set(CATALOG) == set(range(1, 173))
    assert {lookup(c).cause for c in (32, 38, 144, 145, 149)} <= {"application", "informational",
                                                                  "machine"}  # fmt: skip


@pytest.mark.parametrize(
    ("code", "cause", "bucket"),
    [
        (8, "application", "RESTART_APP"),  # GPU stopped processing (FIFO idle timeout)
        (11, "application", "RESTART_APP"),  # invalid or corrupted push buffer stream
        (13, "application", "RESTART_APP"),
        (31, "application", "RESTART_APP"),
        (32, "application", "RESTART_APP"),
        (38, "informational", "IGNORE"),
        (43, "informational", "IGNORE"),
        (45, "application", "WORKFLOW_XID_45"),
        (48, "machine", "WORKFLOW_XID_48"),
        (54, "machine", "CHECK_MECHANICALS"),
        (63, "informational", "IGNORE"),
        (64, "machine", "RESET_GPU"),
        (74, "machine", "WORKFLOW_NVLINK_ERR"),
        (78, "driver", "UPDATE_SWFW"),
        (79, "machine", "RESTART_BM"),
        (94, "application", "RESTART_APP"),
        (95, "machine", "RESET_GPU"),
        (109, "machine", "RESET_GPU"),
        (119, "driver", "RESET_GPU"),
        (120, "driver", "RESET_GPU"),
        (140, "machine", "RESET_GPU"),
        (167, "machine", ""),
    ],
)
def test_each_code_is_classed_by_nvidias_immediate_action(code, cause, bucket):
    xid = lookup(code)
    assert (xid.cause, xid.bucket) == (cause, bucket)
    assert xid.action.endswith(f"[NVIDIA: {bucket or 'none given'}]")


@pytest.mark.parametrize(
    ("code", "text", "cause"),
    [
        (145, "RLW_REMAP Fatal XC0 i0 Link 00 (0x00000004 0x00000040 0x0 0x0)", "machine"),
        (145, "RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0409a0c2 0x00000008)", "informational"),
        (149, "NETIR_LINK_EVT  Fatal   XC0 i0 Link 01 (0x021425c6 0x0)", "machine"),
        (144, "SAW_MVB Non-fatal XC0 i0 Link 0", "informational"),
        (147, "TREX XC0 i0 Link 00 (0x0000000e)", "machine"),  # no word: judged fatal
    ],
)
def test_nvlink5_severity_is_read_from_the_text(code, text, cause):
    assert judge(code, text).cause == cause


@pytest.mark.parametrize(
    ("text", "cause", "says"),
    [
        ("GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)", "machine",
         "reset the GPU"),
        ("GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)", "machine",
         "reboot"),
        ("GPU recovery action changed from 0x0 (None) to 0x4 (Drain and Reset)", "machine",
         "drain the node"),
        ("GPU recovery action changed from 0x0 (None) to 0x3 (Drain P2P)", "machine", "peer"),
        ("GPU recovery action changed from 0x1 (GPU Reset Required) to 0x0 (None)",
         "informational", "none"),
        ("GPU recovery action changed from 0x0 (None) to 0x9 (Warp Drive)", "machine",
         "Warp Drive"),
        ("GPU recovery action changed", "machine", "reboot"),
    ],
)  # fmt: skip
def test_xid_154_does_the_action_the_line_names(text, cause, says):
    xid = judge(154, text)
    assert xid.cause == cause and says in xid.action


def test_an_unknown_code_fails_closed_and_says_what_to_do_with_the_machine():
    xid = lookup(999)
    assert xid.cause == "machine"
    assert xid.action.startswith("drain the node and ask the provider")
    assert "xid_table.py" in xid.action


def test_an_nvrm_kind_todays_table_lacks_is_still_a_machine_fault():
    from rigcheck.facts.kernel_log import nvrm as nvrm_log

    assert nvrm_log.find("fallen_off_bus").cause == "machine"
    unknown = nvrm_log.find("gsp_heartbeat_lost")
    assert unknown.cause == "machine" and "ask the provider" in unknown.action
