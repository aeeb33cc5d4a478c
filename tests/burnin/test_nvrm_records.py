"""A GPU that falls off the bus during the burn-in fails the burn-in, naming it, even where the
driver logs no Xid (the open driver's multi-line NVRM record: rigcheck/facts/kernel_log/nvrm.py).

The kernel-log lines are real: fixtures/realworld/kernel_log.json, each excerpt copied from the
public page it names. They go through the same probe the burn-in reads (journalctl's output
faked below the probe, the clock placed so the record falls inside the load).
"""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from rigcheck.burnin import judge
from rigcheck.burnin import nvrm_events as reading
from rigcheck.burnin.limits import Limits
from rigcheck.facts.kernel_log import reader as kernel_log
from rigcheck.facts.kernel_log.nvrm import parse_nvrm
from rigcheck.facts.kernel_log.xid_events import nvrm_events
from rigcheck.spec import load_spec
from rigcheck.testing.synthetic_trace import faulty_trace, good_trace

REALWORLD = Path(__file__).resolve().parents[2] / "fixtures" / "realworld" / "kernel_log.json"
FALLEN = "https://github.com/NVIDIA/NVSentinel/issues/155"  # open driver 570, no Xid
H100 = Limits(load_spec("h100"))
UPTIME = 2000.0  # the record of FALLEN is stamped 1843.308145 s after boot


def excerpts() -> list[dict]:
    return json.loads(REALWORLD.read_text())["nvidia"]


def real_lines(source: str) -> list[str]:
    (excerpt,) = [e for e in excerpts() if e["source"] == source]
    return [line for line, _ in excerpt["lines"]]


def with_nvrm_excerpts() -> list[dict]:
    """Every real excerpt with an NVRM record in it, as the corpus expects it."""
    return [
        e for e in excerpts() if any(x and x["event"].startswith("NVRM ") for _, x in e["lines"])
    ]


class Journal:
    """journalctl -k printing these lines: the probe's command runner, faked."""

    def __init__(self, lines: list[str]):
        self.stdout = "\n".join(lines) + "\n"

    def __call__(self, argv):
        return SimpleNamespace(returncode=0, stdout=self.stdout, stderr="")


@pytest.fixture
def booted_2000_s_ago(monkeypatch):
    monkeypatch.setattr(kernel_log, "_uptime", lambda: UPTIME)
    return time.time() - UPTIME


def test_the_probe_gives_the_real_record_a_wall_clock_time(booted_2000_s_ago):
    events = nvrm_events(booted_2000_s_ago + 1800, Journal(real_lines(FALLEN)))
    assert [(e["kind"], e["bus_id"]) for e in events] == [("fallen_off_bus", "0000:b3:00.0")]
    assert events[0]["time"] == pytest.approx(booted_2000_s_ago + 1843.308145, abs=0.5)
    assert nvrm_events(booted_2000_s_ago + 1900, Journal(real_lines(FALLEN))) == []


def test_the_burn_in_reads_the_record_inside_its_window(booted_2000_s_ago, monkeypatch):
    journal = Journal(real_lines(FALLEN))
    monkeypatch.setattr(reading, "READER", lambda: lambda since: nvrm_events(since, journal))
    start = booted_2000_s_ago + 1800
    (event,) = reading.read_nvrm_events(start, start + 120)
    assert event["t_s"] == pytest.approx(43.3, abs=0.5)
    assert event["kind"] == "fallen_off_bus" and event["device"] == "0000:b3:00.0"
    assert event["text"].startswith("NVRM: The NVIDIA GPU 0000:b3:00.0 NVRM: (PCI ID: 10de:26b5)")
    assert reading.read_nvrm_events(start, start + 30) == []  # the load had ended: not its fault


def test_an_unreadable_log_is_an_error_record_never_an_empty_list(monkeypatch):
    def refused(since):
        raise PermissionError("journalctl: no access to the kernel log")

    monkeypatch.setattr(reading, "READER", lambda: refused)
    found = reading.read_nvrm_events(0.0, 1.0)
    assert found == {
        "error": "reading NVRM records failed: PermissionError: journalctl: no access to the "
        "kernel log"
    }


def trace_with(events: list[dict]) -> dict:
    trace = copy.deepcopy(GOOD)
    trace["events"]["nvrm"] = events
    return trace


GOOD = good_trace(duration_s=60.0, interval_s=0.5)


@pytest.mark.parametrize("excerpt", with_nvrm_excerpts(), ids=lambda e: e["source"][-40:])
def test_every_real_nvrm_record_fails_the_burn_in_naming_its_gpu(excerpt):
    lines = [line for line, _ in excerpt["lines"]]
    # every NVRM record of a machine fault, and the fatal NVSwitch SXids kept with them (a
    # non-fatal SXid is reported; the channel watchdog's report is judged as its Xid 8)
    expected = [
        x
        for _, x in excerpt["lines"]
        if x and x["event"].split()[0] in ("NVRM", "SXid") and x["cause"] == "machine"
    ]
    events = [
        {"t_s": 12.0, "kind": e["kind"], "device": e["bus_id"], "text": e["text"]}
        for e in parse_nvrm(lines)
    ]
    problems = judge.nvrm(trace_with(events), H100)
    assert len(problems) == len(expected)
    for line, want in zip(problems, expected, strict=True):
        kind = "sxid" if want["event"].startswith("SXid ") else want["event"].split()[1]
        assert line.startswith(f"NVRM {kind} at 12 s on ")
        assert (want["gpu"] or "an unnamed GPU") in line


def test_a_gpu_of_the_trace_is_named_by_its_label_and_the_action_is_given():
    (record,) = parse_nvrm(real_lines(FALLEN)[:3])
    event = {"t_s": 95.0, "kind": "fallen_off_bus", "device": "0000:5d:00.0", "text": "x"}
    assert record["kind"] == event["kind"]
    (line,) = judge.nvrm(trace_with([event]), H100)
    assert line == (
        "NVRM fallen_off_bus at 95 s on gpu3 (NVIDIA H100 80GB HBM3, 0000:5d:00.0): x (the GPU "
        "fell off the PCIe bus (as Xid 79) and does not answer; machine: drain the node and "
        "reboot it; check power, riser/cable seating and cooling; if it recurs, ask the "
        "provider to replace the GPU (RMA))"
    )


def test_no_record_passes_and_an_unread_log_or_an_old_trace_cannot():
    assert judge.nvrm(trace_with([]), H100) == []
    with pytest.raises(judge.CannotJudge, match="NVRM records could not be read: no access"):
        judge.nvrm(trace_with({"error": "no access"}), H100)  # type: ignore[arg-type]
    old = copy.deepcopy(GOOD)
    del old["events"]["nvrm"]
    with pytest.raises(judge.CannotJudge, match="recorded before rigcheck read NVRM records"):
        judge.nvrm(old, H100)


def test_the_cpu_class_has_no_nvrm_records():
    with pytest.raises(judge.NotApplicable, match="no NVRM records"):
        judge.nvrm(trace_with([]), Limits(load_spec("cpu")))


def test_the_synthetic_fault_is_the_real_record_on_one_of_the_trace_s_gpus():
    """rigcheck/testing/synthetic_trace.py's nvrm_fallen_off_bus: FALLEN's record, its bus id
    changed
    to gpu3's (the one edit, said in its docstring)."""
    (real,) = parse_nvrm(real_lines(FALLEN))
    (event,) = faulty_trace("nvrm_fallen_off_bus")["events"]["nvrm"]
    assert event["kind"] == real["kind"] and event["device"] == "0000:5d:00.0"
    assert event["text"] == real["text"].replace("0000:b3:00.0", "0000:5d:00.0")


def test_a_gpu_fallen_off_the_bus_fails_the_replayed_burn_in_naming_it(judge_trace):
    _, cases = judge_trace(faulty_trace("nvrm_fallen_off_bus"))
    failed = {name for name, case in cases.items() if case.outcome == "failed"}
    assert failed == {"test_no_nvrm_fault_records"}
    message = cases["test_no_nvrm_fault_records"].message
    assert "NVRM fallen_off_bus at 95 s on gpu3 (NVIDIA H100 80GB HBM3, 0000:5d:00.0)" in message


@pytest.mark.parametrize(
    ("device", "named"),
    [(None, "an unnamed GPU"), ("0000:b3:00.0", "0000:b3:00.0")],
)
def test_a_record_on_no_gpu_or_on_one_the_trace_did_not_load_is_named_as_logged(device, named):
    event = {"t_s": 7.0, "kind": "init_failed", "device": device, "text": "y"}
    (line,) = judge.nvrm(trace_with([event]), H100)
    assert line.startswith(f"NVRM init_failed at 7 s on {named}: y (the driver could not ")


def test_an_old_trace_says_why_it_cannot_pass_and_what_to_do():
    old = copy.deepcopy(GOOD)
    del old["events"]["nvrm"]
    with pytest.raises(judge.CannotJudge) as refused:
        judge.nvrm(old, H100)
    assert str(refused.value) == (
        "this trace was recorded before rigcheck read NVRM records (a GPU fallen off the bus "
        "with no Xid): run the burn-in again, or read `sudo dmesg | grep NVRM`"
    )
