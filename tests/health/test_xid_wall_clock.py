"""The burn-in's Xid reader: kernel-log stamps (seconds since boot) placed on the wall clock,
so events during the load are told from events before it; an unreadable log raises its reason."""

import time

import pytest
from test_xid_probe import BOOT, JOURNAL_HINT, FakeRunner

from rigcheck.burnin import events
from rigcheck.facts.kernel_log import reader as kernel_log
from rigcheck.facts.kernel_log import xid_events as xid


@pytest.fixture
def uptime_7200(monkeypatch):
    monkeypatch.setattr(kernel_log, "_uptime", lambda: 7200.0)


def journal(*lines):
    return FakeRunner({"journalctl": (0, "\n".join((BOOT, *lines)) + "\n", "")})


def xid_at(seconds_since_boot, code):
    return (
        f"[{seconds_since_boot:12.6f}] gpu01 kernel: NVRM: Xid (PCI:0000:3b:00): {code}, "
        "pid=1234, name=python, text"
    )


def test_events_before_since_are_left_out(uptime_7200):
    now = time.time()
    run = journal(xid_at(100.0, 13), xid_at(7190.0, 79))  # ~2 h ago, ~10 s ago
    found = xid.xid_events(now - 60, run)
    assert [(e["code"], e["bus_id"]) for e in found] == [(79, "0000:3b:00.0")]
    assert now - 12 < found[0]["time"] < now - 8


def test_unreadable_log_raises_the_probes_reason(monkeypatch, uptime_7200):
    def refuse(path=None):
        raise PermissionError(1, "Operation not permitted", "/dev/kmsg")

    monkeypatch.setattr(kernel_log, "_kmsg", refuse)
    run = FakeRunner({"journalctl": (0, "", JOURNAL_HINT), "dmesg": (1, "", "not permitted")})
    with pytest.raises(xid.KernelLogUnreadable, match="no kernel log readable"):
        xid.xid_events(time.time() - 60, run)


def test_burn_in_hook_reads_through_it(monkeypatch, uptime_7200):
    """The hook in rigcheck/burnin/events.py finds this reader: an Xid 79 during the load."""
    run = journal(xid_at(7195.0, 79))
    monkeypatch.setattr(xid, "CommandRunner", lambda: run)
    start = time.time() - 30
    found = events.read_xid_events(start, time.time())
    assert [e["code"] for e in found] == [79]
    assert 20 < found[0]["t_s"] < 30
