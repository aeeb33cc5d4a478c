"""Xid events in the kernel log: GPU faults the driver logged since boot (or in --xid-window),
NVSwitch SXids and NVRM records without an Xid, amdgpu's fault lines, the ConnectX NIC
driver's (mlx5_core) fault records, and the driver error lines no rule explains."""

import warnings
from collections import defaultdict

import pytest

from rigcheck.facts.kernel_log import amdgpu as amdgpu_log
from rigcheck.facts.kernel_log import mlx5 as mlx5_log
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


def _xid_where(names: dict[str, str], facts, i: int, text: str) -> str:
    """The GPU an Xid names, and the MIG instance the driver attributes it to."""
    where = _where(names, fact(facts, f"kernel_log.xid_events.{i}.bus_id"), text, "NVML")
    mig = facts.data["kernel_log"]["xid_events"][i].get("mig")
    if not isinstance(mig, dict):
        return where
    tags = (("GPU-I", mig.get("gpu_instance")), ("GPU-CI", mig.get("compute_instance")))
    parts = [f"{tag} {n}" for tag, n in tags if n is not None]
    return f"{where}, MIG {' '.join(parts)}"


def _record_where(names: dict[str, str], facts, i: int, kind: str, text: str) -> str:
    """An SXid names its NVSwitch (and link, in its meaning); any other record names a GPU."""
    bus = fact(facts, f"kernel_log.nvrm_events.{i}.bus_id")
    if kind == nvrm_log.SXID:
        switch = facts.data["kernel_log"]["nvrm_events"][i].get("switch") or "an NVSwitch"
        return f"{switch} (PCI {bus or 'not named'})"
    return _where(names, bus, text, "NVML")


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
        where = _xid_where(names, facts, i, text)
        (apps if xid.cause in NOT_FAILED else faults)[(f"Xid {xid.code}", xid, where)] += 1
    for i in range(len(fact(facts, "kernel_log.nvrm_events"))):  # nvrm.py, sxid.py
        kind = fact(facts, f"kernel_log.nvrm_events.{i}.kind")
        text = fact(facts, f"kernel_log.nvrm_events.{i}.text")
        record = nvrm_log.judge_event(kind, text)
        where = _record_where(names, facts, i, kind, text)
        label = "SXid" if kind == nvrm_log.SXID else f"NVRM {record.kind}"
        (apps if record.cause in NOT_FAILED else faults)[(label, record, where)] += 1
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


def _to_do(faults: dict, name) -> list[str]:
    """Each fault found, (kind, device) -> count: its name, device, meaning and what to do."""
    return [
        f"{name(k)} x{n} on {where}: {k.meaning} ({k.cause} fault). To do: {k.action}"
        for (k, where), n in faults.items()
    ]


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
        context = facts.data["kernel_log"]["amdgpu_events"][i].get("context")
        kind = amdgpu_log.judge(text, context)
        if kind is None:  # a line today's table no longer names: judged, never dropped
            kind = amdgpu_log.AmdgpuFault("unknown", None, f"unclassified: {text!r}", "machine",
                                          "read the line and ask the provider")  # fmt: skip
        where = _where(names, bus, text, "torch")
        (apps if kind.cause in NOT_FAILED else faults)[(kind, where)] += 1
    app_note = "; ".join(f"{k.name} x{n} on {w}" for (k, w), n in apps.items())
    if app_note:
        warnings.warn(f"application-caused amdgpu events (no machine fault): {app_note}",
                      stacklevel=1)  # fmt: skip
    found = _to_do(faults, lambda k: k.name)
    assert not found, (
        f"the kernel log ({_window(facts)}) has amdgpu fault lines: {' | '.join(found)}."
        + (f" Also seen, caused by applications and not judged: {app_note}." if app_note else "")
        + f" Patterns: {amdgpu_log.SOURCE}."
    )


def _nic_names(facts) -> dict[str, str]:
    """NIC PCI address -> its RDMA device name (mlx5_0), from the fabric probe where it ran."""
    fabric = facts.data.get("fabric")
    devices = fabric.get("rdma_devices") if isinstance(fabric, dict) else None
    names = {}
    for device in devices if isinstance(devices, list) else []:
        pci = device.get("pci") if isinstance(device, dict) else None
        if isinstance(pci, dict) and isinstance(pci.get("bus_id"), str):
            names[pci["bus_id"].lower()] = str(device.get("name"))
    return names


def _nic_where(names: dict[str, str], bus: str | None, text: str) -> str:
    """The NIC a record names (its RDMA device where the fabric probe saw it); a record that
    names none (a sub-function's) is named by its line, so the node still fails."""
    if bus is None:
        return f"a NIC the line does not name ({text[:120]!r})"
    return f"NIC {bus}" + (f" ({names[bus]})" if bus in names else "")


def test_no_nic_faults(spec, facts):
    """The ConnectX driver's (mlx5_core) records (rigcheck/facts/kernel_log/mlx5.py), sorted as
    the Xid check sorts codes: a NIC whose firmware stopped answering, asserted or could not be
    recovered fails the node; a recovery that succeeded, a refused command or a link that went
    down is reported as a warning."""
    if spec.vendor not in ("nvidia", "amd"):
        pytest.skip(f"NIC fault records are judged on GPU classes: {spec.name} is {spec.vendor}")
    log = facts.data.get("kernel_log")
    if isinstance(log, dict) and "error" in log:
        pytest.skip("the kernel log could not be read: the GPU kernel-log checks fail for it")
    if isinstance(log, dict) and "source" in log and "mlx5_events" not in log:
        pytest.skip(
            "this snapshot has no mlx5_core records: it was recorded (or written) "
            "before rigcheck read them; record the machine again to judge its NICs"
        )
    events = newer_fact(facts, "kernel_log.mlx5_events")
    names = _nic_names(facts)
    faults, notes = defaultdict(int), defaultdict(int)
    for i in range(len(events)):
        kind = mlx5_log.find(fact(facts, f"kernel_log.mlx5_events.{i}.kind"))
        text = fact(facts, f"kernel_log.mlx5_events.{i}.text")
        where = _nic_where(names, fact(facts, f"kernel_log.mlx5_events.{i}.bus_id"), text)
        (notes if kind.cause in NOT_FAILED else faults)[(kind, where)] += 1
    note = "; ".join(f"{k.kind} x{n} on {w}: {k.meaning}" for (k, w), n in notes.items())
    if note:
        warnings.warn(f"NIC driver events that fail no node: {note}", stacklevel=1)
    found = _to_do(faults, lambda k: k.kind)
    assert not found, (
        f"the kernel log ({_window(facts)}) has NIC fault records: {' | '.join(found)}."
        + (f" Also seen, no fault: {note}." if note else "")
        + f" Patterns: {mlx5_log.SOURCE}."
    )


def test_no_unexplained_driver_errors(spec, facts, devices, request):
    """Error lines of a GPU, switch or NIC driver that no rule reads (kernel_log/unexplained.py):
    a warning quoting each line and its device, and a failure in the acceptance tier, where an
    error nobody can explain is no pass."""
    if spec.vendor not in ("nvidia", "amd"):
        pytest.skip(f"driver error lines are judged on GPU classes: {spec.name} is {spec.vendor}")
    log = facts.data.get("kernel_log")
    if isinstance(log, dict) and "source" in log and "unexplained_events" not in log:
        pytest.skip("this snapshot was recorded before rigcheck kept each line's priority")
    events = newer_fact(facts, "kernel_log.unexplained_events")
    names = _gpu_names(devices)
    found = []
    for i in range(len(events)):
        text = fact(facts, f"kernel_log.unexplained_events.{i}.text")
        bus = fact(facts, f"kernel_log.unexplained_events.{i}.bus_id")
        where = names.get(bus.lower(), f"PCI {bus}") if bus else "no device named"
        found.append(f"{where}: {text!r}")
    if not found:
        return
    count = fact(facts, "kernel_log.unexplained_count")
    shown = " | ".join(found[:10]) + (f" (+{len(found) - 10} more)" if len(found) > 10 else "")
    message = (
        f"the kernel log ({_window(facts)}) has {count} driver error line(s) no rigcheck rule "
        f"explains: {shown}. Read each in the kernel log; if it is a fault, ask the provider; "
        "if it is known harmless, add it with its public source to "
        "rigcheck/facts/kernel_log/benign_errors.json"
    )
    tier = request.config.getoption("tier", None)
    assert getattr(tier, "name", None) != "acceptance", message
    warnings.warn(message, stacklevel=1)
