"""The kernel log as readers and reports print it: Xids with MIG tags, redacted or short
addresses and syslog prefixes; each message's priority (kmsg, `dmesg -r`, `dmesg -x`, journal
JSON); NVSwitch SXids judged from NVIDIA's list, in the suite, the burn-in and the epilog; and
driver error lines no rule explains, which are never a silent pass."""

from __future__ import annotations

import copy
import importlib
import json
import warnings
from types import SimpleNamespace

import pytest

from rigcheck.burnin import judge as burnin_judge
from rigcheck.burnin.limits import Limits
from rigcheck.facts import Facts
from rigcheck.facts.kernel_log import amdgpu, line_form, nvrm, sxid, unexplained
from rigcheck.facts.kernel_log import reader as kernel_log
from rigcheck.gate.epilog import new_nvrm
from rigcheck.spec import load_spec
from rigcheck.testing.synthetic import synthetic_snapshot
from rigcheck.testing.synthetic_trace import good_trace

suite = importlib.import_module("suites.facts.test_kernel_log")
H100 = load_spec("h100")
MI300X = load_spec("mi300x")


@pytest.mark.parametrize(
    ("line", "bus", "mig", "t_s"),
    [
        # NVIDIA's A100 memory-error guide and kernel_rc.c's format: MIG attribution kept
        ("NVRM: Xid (PCI:0000:01:00 GPU-I:05): 94, pid=7194, Contained: CE User Channel (0x9). "
         "RST: No, D-RST: No", "0000:01:00.0", {"gpu_instance": 5, "compute_instance": None}, None),
        ("[ 12.5] NVRM: Xid (PCI:0000:3b:00 GPU-I:01 GPU-CI:02): 13, pid=9, name=a, Graphics",
         "0000:3b:00.0", {"gpu_instance": 1, "compute_instance": 2}, 12.5),
        ("Jun 12 16:12:04 box kernel: [ 7.25] NVRM: Xid (PCI:...): 79, GPU has fallen off the bus",
         None, None, 7.25),  # redacted by its reporter: kept, no GPU named
        ("[...] NVRM: Xid (0000:03:00): 14, Channel 00000001", "0000:03:00.0", None, None),
        ("NVRM: Xid (PCI:3b:00): 48, An uncorrectable double bit", "0000:3b:00.0", None, None),
    ],
)  # fmt: skip
def test_every_printed_form_of_an_xid_is_read(line, bus, mig, t_s):
    event = kernel_log.parse_xid(line)
    assert (event["bus_id"], event.get("mig"), event["t_s"]) == (bus, mig, t_s)


@pytest.mark.parametrize(
    ("line", "level", "rest"),
    [
        ("<3>[  269.516977] NVRM: x", 3, "[  269.516977] NVRM: x"),  # dmesg -r
        ("<11>[ 1.0] NVRM: x", 3, "[ 1.0] NVRM: x"),  # facility bits above the level
        ("kern  :err   : [  269.516977] NVRM: x", 3, "[  269.516977] NVRM: x"),  # dmesg -x
        ("kern  :info  : [ 1.0] NVRM: x", 6, "[ 1.0] NVRM: x"),
        # talosctl dmesg (open-gpu-kernel-modules#446): node, facility, "warning", ISO time
        (
            "192.168.11.119: kern: warning: [2026-04-22T21:30:51.52Z]: NVRM: x",
            4,
            "[2026-04-22T21:30:51.52Z]: NVRM: x",
        ),
        ("[ 1.0] NVRM: x", None, "[ 1.0] NVRM: x"),  # plain dmesg: unknown
    ],
)
def test_each_line_keeps_its_level(line, level, rest):
    assert line_form.split(line) == (level, rest)


def test_kmsg_and_the_journal_give_the_level_and_the_time():
    assert kernel_log._kmsg_line("3,1234,269516977,-;NVRM: x\n") == "<3>[269.516977] NVRM: x"
    record = {"MESSAGE": "NVRM: x", "PRIORITY": "3", "_SOURCE_MONOTONIC_TIMESTAMP": "269516977"}
    assert line_form.journal_line(json.dumps(record)) == "<3>[269.516977] NVRM: x"
    bytes_message = {"MESSAGE": list(b"amdgpu: \xff x"), "PRIORITY": "2"}
    assert line_form.journal_line(json.dumps(bytes_message)).startswith("<2>amdgpu: ")
    assert line_form.journal_line("[ 1.0] plain text") == "[ 1.0] plain text"


FATAL = "nvidia-nvswitch1: SXid (PCI:0000:86:00.0): 20034, Fatal, Link 48 LTSSM Fault Up"
NONFATAL = (
    "nvidia-nvswitch0: SXid (PCI:0000:c3:00.0): 20009, Non-fatal, Link 28 RX Short Error Rate"
)


@pytest.mark.parametrize(
    ("line", "cause"),
    [
        (FATAL, "machine"),
        ("nvidia-nvswitch0: SXid (PCI:0000:59:00.0): 23001, Fatal, Link 12", "machine"),
        (
            "nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 11012, Non-fatal, Link 3 ...",
            "informational",
        ),
        # listed non-fatal by NVIDIA, but its stated impact is stalled NVLink traffic
        ("nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress", "machine"),
        (NONFATAL, "informational"),  # not in the guide's list: the line's own word decides
        ("nvidia-nvswitch0: SXid (PCI:0000:c3:00.0): 28006, Non-fatal, Link 29", "informational"),
        ("nvidia-nvswitch0: SXid (PCI:0000:c3:00.0): 28007, Link 29 no word", "machine"),
    ],
)
def test_an_sxid_is_judged_from_nvidias_list_then_its_own_word(line, cause):
    assert sxid.judge(line).cause == cause


def _node(spec, lines: list[str]) -> Facts:
    facts = Facts(synthetic_snapshot(spec))
    levels, stripped = kernel_log.levels_and_lines(lines)
    log = facts.data["kernel_log"]
    log["nvrm_events"] = nvrm.parse_nvrm(stripped)
    log["unexplained_events"] = unexplained.unexplained_errors(levels, stripped)
    log["unexplained_count"] = len(log["unexplained_events"])
    return facts


def _run(check, spec, facts, *extra) -> tuple[str, str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            check(spec, facts, facts.devices, *extra)
        except AssertionError as exc:
            return "failed", str(exc)
    return "passed", " ".join(str(w.message) for w in caught)


def test_a_fatal_sxid_fails_the_node_naming_the_switch_and_link_a_nonfatal_one_warns():
    outcome, message = _run(suite.test_no_machine_fault_xids, H100, _node(H100, [FATAL]))
    assert outcome == "failed"
    assert "nvidia-nvswitch1 (PCI 0000:86:00.0)" in message and "link 48" in message
    quiet = "nvidia-nvswitch0: SXid (PCI:0000:c3:00.0): 11012, Non-fatal, Link 3 single bit ECC"
    outcome, message = _run(suite.test_no_machine_fault_xids, H100, _node(H100, [quiet]))
    assert outcome == "passed" and "SXid" in message


def test_the_burn_in_and_the_epilog_drain_on_a_fatal_sxid_only():
    def event(line: str) -> dict:
        found = nvrm.parse_nvrm([line])[0]
        return {"t_s": 3.0, "kind": found["kind"], "device": found["bus_id"], "text": found["text"]}

    quiet = "nvidia-nvswitch0: SXid (PCI:0000:c3:00.0): 11012, Non-fatal, Link 3 single bit ECC"
    trace = copy.deepcopy(good_trace(duration_s=60.0, interval_s=0.5))
    trace["events"]["nvrm"] = [event(FATAL), event(quiet)]
    problems = burnin_judge.nvrm(trace, Limits(H100))
    assert len(problems) == 1 and "20034" in problems[0] and "link 48" in problems[0]
    before = {"kernel_log": {"nvrm_events": []}}
    after = {"kernel_log": {"nvrm_events": nvrm.parse_nvrm([quiet])}}
    assert new_nvrm(before, after) == []
    after["kernel_log"]["nvrm_events"] += nvrm.parse_nvrm([FATAL])
    assert [f.key for f in new_nvrm(before, after)] == ["job_left_nvrm"]


# Invented, plausible lines no rule reads (written for this test, not copied from a report):
# a new NVRM failure, an NVSwitch, amdgpu SMU and mlx5 firmware error, a UVM one, at err or crit.
UNKNOWN = [
    "<3>[ 5012.334211] NVRM: GPU 0000:9b:00.0: kgrmgrFooBar_GB100: unexpected engine state 0x3f",
    "<3>[ 5013.100000] nvidia-nvswitch2: nvswitch_link_foo: link 17 reported error class 0x9",
    "<2>[ 5014.200000] amdgpu 0000:c1:00.0: amdgpu: SMU: response 0xFE for msg 0x2F, unstable",
    "<3>[ 5015.300000] mlx5_core 0000:0c:00.0: mlx5_fw_reporter_foo: new fatal syndrome 0x11",
    "<3>[ 5016.400000] nvidia-uvm: uvm_foo: replayable fault buffer overflow on GPU 3",
]


def test_an_unknown_error_line_from_a_driver_is_never_a_silent_pass():
    events = unexplained.unexplained_errors(*kernel_log.levels_and_lines(UNKNOWN))
    assert [e["driver"] for e in events] == ["NVRM", "nvidia-nvswitch2", "amdgpu", "mlx5_core",
                                             "nvidia-uvm"]  # fmt: skip
    assert events[0]["bus_id"] == "0000:9b:00.0" and events[2]["level"] == "crit"
    facts = _node(H100, UNKNOWN)
    quick = SimpleNamespace(config=SimpleNamespace(getoption=lambda name, default=None: None))
    outcome, message = _run(suite.test_no_unexplained_driver_errors, H100, facts, quick)
    assert outcome == "passed" and "5 driver error line(s)" in message
    assert "kgrmgrFooBar_GB100" in message and "PCI 0000:0c:00.0" in message
    tier = SimpleNamespace(name="acceptance")
    acceptance = SimpleNamespace(config=SimpleNamespace(getoption=lambda name, default=None: tier))
    outcome, message = _run(suite.test_no_unexplained_driver_errors, H100, facts, acceptance)
    assert outcome == "failed" and "benign_errors.json" in message


def test_the_same_lines_at_info_level_or_explained_by_a_rule_are_no_event():
    info = [line.replace("<3>", "<6>").replace("<2>", "<6>") for line in UNKNOWN]
    assert unexplained.unexplained_errors(*kernel_log.levels_and_lines(info)) == []
    explained = [
        "<3>[ 1.0] NVRM: Xid (PCI:0000:01:00): 79, pid=1, GPU has fallen off the bus.",
        f"<3>[ 2.0] {FATAL}",
        "<3>[ 2.1] nvidia-nvswitch1: SXid (PCI:0000:86:00.0): 20034, Severity 1 Engine instance 48",
        "<3>[ 3.0] amdgpu 0000:c5:00.0: amdgpu: MES failed to respond to msg=REMOVE_QUEUE",
    ]
    assert unexplained.unexplained_errors(*kernel_log.levels_and_lines(explained)) == []
    facts = _node(MI300X, [])
    assert _run(suite.test_no_unexplained_driver_errors, MI300X, facts, None)[0] == "passed"


def test_a_mode_reset_at_boot_or_resume_is_bring_up_and_during_a_run_a_fault():
    resume = ["[ 900.0] PM: suspend exit", "[ 901.0] amdgpu 0000:03:00.0: amdgpu: MODE1 reset"]
    boot = ["[ 4.1] amdgpu 0000:03:00.0: amdgpu: MODE1 reset"]
    run = [
        "[ 950.0] amdgpu 0000:03:00.0: amdgpu: GPU reset begin!",
        "[ 951.0] amdgpu 0000:03:00.0: amdgpu: MODE1 reset",
    ]
    judged = []
    for lines in (resume, boot, run):
        event = amdgpu.parse_amdgpu_lines(lines)[-1]
        judged.append(amdgpu.judge(event["text"], event.get("context")).cause)
    assert judged == ["informational", "informational", "driver"]


def test_err_lines_healthy_machines_log_are_listed_with_their_source_and_not_reported():
    entries = json.loads(unexplained.BENIGN_FILE.read_text())["lines"]
    assert entries and all(e["source"].startswith("https://") and e["what"] for e in entries)
    # kachick/dotfiles#970's two boot lines, at the err level amdgpu_securedisplay.c logs them
    healthy = [
        "<3>[ 9.1] amdgpu 0000:04:00.0: amdgpu SECUREDISPLAY: query securedisplay TA failed. "
        "ret 0x0",
        "<3>[ 9.2] amdgpu 0000:04:00.0: amdgpu: Secure display: Generic Failure.",
    ]
    assert unexplained.unexplained_errors(*kernel_log.levels_and_lines(healthy)) == []


# Real lines: the NVRM ones from open-gpu-kernel-modules#1230 (595.71.05, GPU6 of a multi-GPU
# host) and #446 (Talos), the banner from clowdhaus/eksnode's TODO.md; the "<4>" level and the
# "[    C3]" printk caller (a CONFIG_PRINTK_CALLER kernel's, as in #726) are put on by hand.
MEMSYS = (
    "NVRM: GPU6 kgmmuCheckMemSubsysError_IMPL: Memory Subsystem Error detected. "
    "kbusSendSysmembarSingle failed."
)
HEARTBEAT = (
    "NVRM: GPU6 _kgspIsHeartbeatTimedOut: Heartbeat timed out, currentTimeMs 812751949 "
    "heartbeat 1899482 heartbeatWithOffsetMs 812745879 diff 6070 timeout 5200"
)
TALOS = (
    "192.168.11.119: kern: warning: [2026-04-22T21:30:51.526447914Z]: NVRM: nvAssertFailedNoLog: "
    "Assertion failed: Back to back GSP RPC timeout detected! GPU marked for reset @ "
    "kernel_gsp.c:2387"
)
XID_31 = (  # pytorch/pytorch#51382, joined by hand with the line above
    "NVRM: Xid (PCI:0000:db:00): 31, pid=13641, Ch 00000008, intr 00000000. MMU Fault: ENGINE "
    "GRAPHICS GPCCLIENT_T1_10 faulted @ 0x7fd7_90743000. Fault is of type FAULT_PDE "
    "ACCESS_TYPE_VIRT_READ"
)
PERSISTENCE = (
    "NVRM: Persistence mode is deprecated and will be removed in a future release. Please use "
    "nvidia-persistenced instead."
)


@pytest.mark.parametrize(
    ("lines", "seen"),
    [
        ([f"<4>[   84.300480] {MEMSYS}"], 1),  # the journal's level for it: NVRM prints none
        ([f"[   84.300480] {MEMSYS}"], 1),  # a copied report: no level
        ([f"[  185.590216][    C3] {MEMSYS}"], 1),  # with the printk caller
        # dmesg -x --time-format iso, the prefix of leptonai/gpud#338's SXid line
        ([f"kern  :warn  : 2025-01-25T10:34:54,859532+00:00 {MEMSYS}"], 1),
        ([TALOS], 1),
        ([f"<6>[   84.300480] {MEMSYS}"], 0),  # logged at info on purpose: no error
        ([f"<4>[   20.864613] {PERSISTENCE}"], 0),  # a healthy node's notice
        ([f"<4>[   24.302465] {HEARTBEAT}", f"<4>[   84.300480] {MEMSYS}"], 0),  # its dump
        ([XID_31, f"<4>[   84.300480] {MEMSYS}"], 1),  # an application's Xid explains nothing
    ],
)  # fmt: skip
def test_an_nvrm_error_at_the_drivers_own_level_is_seen_unless_a_record_explains_it(lines, seen):
    """The driver prints its RM errors with no level, so the kernel logs them at warning: an
    error-worded NVRM line is reported at warning or unknown level, except as a record's dump."""
    events = unexplained.unexplained_errors(*kernel_log.levels_and_lines(lines))
    assert len(events) == seen, events
    assert all(e["driver"] == "NVRM" and e["bus_id"] is None for e in events)
