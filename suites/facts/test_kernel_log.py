"""Xid events in the kernel log: GPU faults the driver logged since boot (or in --xid window)."""

import warnings
from collections import defaultdict

import pytest

from rigcheck.facts.xid_catalog import SOURCE, lookup
from rigcheck.limits import count, newer_fact, nvidia_only, record

pytestmark = pytest.mark.facts


def _gpu_names(devices: list[dict]) -> dict[str, str]:
    """PCI bus id -> "GPU i (bus)", for naming the GPU an Xid line points at."""
    names = {}
    for device in devices:
        pci = device.get("pci")
        if isinstance(pci, dict) and isinstance(pci.get("bus_id"), str):
            names[pci["bus_id"].lower()] = f"GPU {device.get('index')} ({pci['bus_id']})"
    return names


def _events(log: dict) -> list[dict]:
    events = log["xid_events"]
    if not isinstance(events, list):
        pytest.fail(f"cannot check: kernel_log.xid_events is {events!r}, not a list", pytrace=False)
    for event in events:
        record(event, "an Xid event", ("code", "bus_id", "t_s"))
        count(event["code"], "an Xid event's code")
    return events


def _window(log: dict) -> str:
    window = log.get("window_s")
    span = "since boot" if window is None else f"in the last {window} s"
    return f"{log['source']}, {span}"


def test_no_machine_fault_xids(spec, facts, devices):
    nvidia_only(spec, "kernel-log GPU faults (Xid; amdgpu RAS on AMD)")
    log = record(newer_fact(facts, "kernel_log"), "kernel_log", ("source", "xid_events"))
    names = _gpu_names(devices)
    faults, apps = defaultdict(list), defaultdict(list)
    for event in _events(log):
        xid = lookup(event["code"])
        where = names.get(str(event["bus_id"]).lower(), f"PCI {event['bus_id']} (no GPU NVML sees)")
        (apps if xid.cause == "application" else faults)[(xid, where)].append(event)
    app_note = "; ".join(f"Xid {x.code} x{len(e)} on {w}" for (x, w), e in apps.items())
    if app_note:
        warnings.warn(f"application-caused Xid events (no machine fault): {app_note}", stacklevel=1)
    found = [
        f"Xid {x.code} x{len(e)} on {where}: {x.meaning} ({x.cause} fault). To do: {x.action}"
        for (x, where), e in faults.items()
    ]
    assert not found, (
        f"the kernel log ({_window(log)}) has GPU fault events: {' | '.join(found)}."
        + (f" Also seen, caused by applications and not judged: {app_note}." if app_note else "")
        + f" Meanings: {SOURCE}."
    )
