"""Xid events in the kernel log: GPU faults the driver logged since boot (or in --xid-window)."""

import warnings
from collections import defaultdict

import pytest

from rigcheck.facts.kernel_log import amdgpu as amdgpu_log
from rigcheck.facts.kernel_log import nvrm as nvrm_log
from rigcheck.facts.kernel_log.xid_catalog import BY_TEXT, NOT_FAILED, SOURCE, judge
from rigcheck.limits import newer_fact, nvidia_only
from rigcheck.require import device_fact, fact, gpu_label

pytestmark = pytest.mark.facts


def _gpu_names(devices: list[dict]) -> dict[str, str]:
    """PCI bus id -> "GPU i (bus)", for naming the GPU an Xid line points at."""
    return {bus.lower(): gpu_label(d) for d, bus in device_fact(devices, "pci.bus_id")}


def _where(names: dict[str, str], bus: str | None, text: str, seen_by: str) -> str:
    """The GPU a log line names; a line that names none is named itself, so the node fails."""
    if bus is None:
        return f"a GPU the line does not name ({text[:120]!r})"
    return names.get(bus.lower(), f"PCI {bus} (no GPU {seen_by} sees)")


def _window(facts) -> str:
    window = fact(facts, "kernel_log.window_s")
    span = "since boot" if window is None else f"in the last {window} s"
    return f"{fact(facts, 'kernel_log.source')}, {span}"


def test_no_machine_fault_xids(spec, facts, devices):
    if spec.vendor == "amd":
        pytest.skip("Xid is NVIDIA's: on AMD, test_no_amdgpu_faults judges amdgpu's log lines")
    nvidia_only(spec, "kernel-log GPU faults (Xid; amdgpu RAS on AMD)")
    events = newer_fact(facts, "kernel_log.xid_events")
    names = _gpu_names(devices)
    faults, apps = defaultdict(int), defaultdict(int)
    for i in range(len(events)):
        code = fact(facts, f"kernel_log.xid_events.{i}.code")
        text = fact(facts, f"kernel_log.xid_events.{i}.text") if code in BY_TEXT else ""
        xid = judge(code, text)
        where = _where(names, fact(facts, f"kernel_log.xid_events.{i}.bus_id"), text, "NVML")
        (apps if xid.cause in NOT_FAILED else faults)[(f"Xid {xid.code}", xid, where)] += 1
    for i in range(len(fact(facts, "kernel_log.nvrm_events"))):  # non-Xid: kernel_log/nvrm.py
        record = nvrm_log.find(fact(facts, f"kernel_log.nvrm_events.{i}.kind"))
        text = fact(facts, f"kernel_log.nvrm_events.{i}.text")
        where = _where(names, fact(facts, f"kernel_log.nvrm_events.{i}.bus_id"), text, "NVML")
        faults[(f"NVRM {record.kind}", record, where)] += 1
    app_note = "; ".join(f"{k} x{n} on {w} ({x.cause})" for (k, x, w), n in apps.items())
    if app_note:
        warnings.warn(f"Xid events that are no machine fault: {app_note}", stacklevel=1)
    found = [
        f"{k} x{n} on {where}: {x.meaning} ({x.cause} fault). To do: {x.action}"
        for (k, x, where), n in faults.items()
    ]
    assert not found, (
        f"the kernel log ({_window(facts)}) has GPU fault events: {' | '.join(found)}."
        + (f" Also seen, no machine fault and not judged: {app_note}." if app_note else "")
        + f" Meanings: {SOURCE}."
    )


def test_no_amdgpu_faults(spec, facts, devices):
    """amdgpu's RAS, reset and hang lines (rigcheck/facts/kernel_log/amdgpu.py), sorted as the
    Xid check sorts codes: machine and driver faults fail, application faults (page faults, a
    soft-recovered job) are reported as a warning."""
    if spec.vendor != "amd":
        pytest.skip(f"amdgpu's kernel-log lines: {spec.name} is {spec.vendor}")
    events = newer_fact(facts, "kernel_log.amdgpu_events")
    names = _gpu_names(devices)
    faults, apps = defaultdict(int), defaultdict(int)
    for i in range(len(events)):
        text = fact(facts, f"kernel_log.amdgpu_events.{i}.text")
        bus = fact(facts, f"kernel_log.amdgpu_events.{i}.bus_id")
        kind = amdgpu_log.classify(text)
        if kind is None:  # a line today's table no longer names: judged, never dropped
            kind = amdgpu_log.AmdgpuFault("unknown", None, f"unclassified: {text!r}", "machine",
                                          "read the line and ask the provider")  # fmt: skip
        where = _where(names, bus, text, "torch")
        (apps if kind.cause == "application" else faults)[(kind, where)] += 1
    app_note = "; ".join(f"{k.name} x{n} on {w}" for (k, w), n in apps.items())
    if app_note:
        warnings.warn(f"application-caused amdgpu events (no machine fault): {app_note}",
                      stacklevel=1)  # fmt: skip
    found = [
        f"{k.name} x{n} on {where}: {k.meaning} ({k.cause} fault). To do: {k.action}"
        for (k, where), n in faults.items()
    ]
    assert not found, (
        f"the kernel log ({_window(facts)}) has amdgpu fault lines: {' | '.join(found)}."
        + (f" Also seen, caused by applications and not judged: {app_note}." if app_note else "")
        + f" Patterns: {amdgpu_log.SOURCE}."
    )
