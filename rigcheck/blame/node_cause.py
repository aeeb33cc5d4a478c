"""Why a suspect node is slow or hung: its facts now against the facts at the job's start.

Each finding has a cause class. Machine faults (Xid, NVRM, ECC, remaps: the epilog's own
readers, rigcheck.gate.epilog), clock slowdowns the hardware imposes, a PCIe link trained
narrower than it can run or replaying more, NVLink links down or counting errors, InfiniBand
port error counters that grew. Counters need the start's facts (`before`); without them only
what is wrong now is judged, and kernel-log events are placed against the job's start time.
Clock-event reasons' share of the job's time: rigcheck.blame.clock_share.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from rigcheck.blame.clock_share import clock_causes
from rigcheck.facts.fabric.rdma_counters import ERROR_COUNTERS
from rigcheck.gate.epilog import Finding, grown_ecc, new_nvrm, new_xids, slowdowns

GPU_FAULT, CLOCKS, PCIE, NVLINK, IB = (
    "gpu_fault",
    "clock_slowdown",
    "pcie_link",
    "nvlink",
    "ib_link",
)
NVLINK_ERRORS = ("replay", "recovery", "crc_flit", "crc_data")


@dataclass(frozen=True)
class Cause:
    kind: str  # the cause class
    detail: str


def node_causes(
    before: dict[str, Any] | None, after: dict[str, Any], gpu: str | None, job_start: float | None
) -> list[Cause]:
    """Every cause found on the node, the suspect GPU's first; GPU None: every GPU."""
    held = [Cause(CLOCKS, detail) for _, detail in clock_causes(before, after)]
    before = before or _log_before(after, job_start)
    found = [Cause(GPU_FAULT, f.detail) for f in _faults(before, after)]
    found += [Cause(CLOCKS, f.detail) for f in slowdowns(after)] + held
    found += _pcie(before, after) + _nvlink(before, after) + _ib(before, after)
    mine = [c for c in found if gpu is None or _names_gpu(c.detail, gpu, after)]
    return mine + [c for c in found if c not in mine]


def _faults(before: dict[str, Any], after: dict[str, Any]) -> list[Finding]:
    return new_xids(before, after) + new_nvrm(before, after) + grown_ecc(before, after)


def _log_before(after: dict[str, Any], job_start: float | None) -> dict[str, Any]:
    """No start facts: a kernel log holding the events logged before the job began, so only
    those since count as new (the stamps are seconds since boot, the facts say when they were
    read and the uptime then). Counters are left equal: nothing grew that can be shown."""
    log = after.get("kernel_log") or {}
    booted = _collected_at(after) - log.get("uptime_s", 0) if job_start else None
    old = {}
    for key in ("xid_events", "nvrm_events"):
        events = log.get(key) if isinstance(log.get(key), list) else []
        old[key] = [e for e in events if booted is None or _at(e, booted) < job_start]
    old["xid_count"] = len(old["xid_events"])
    return {"kernel_log": old, "devices": after.get("devices"), "fabric": after.get("fabric")}


def _at(event: Any, booted: float) -> float:
    stamp = event.get("t_s") if isinstance(event, dict) else None
    return booted + stamp if isinstance(stamp, int | float) else float("-inf")


def _collected_at(facts: dict[str, Any]) -> float:
    text = (facts.get("origin") or {}).get("collected_at")
    try:
        return dt.datetime.fromisoformat(text).timestamp()
    except (TypeError, ValueError):
        return dt.datetime.now(dt.timezone.utc).timestamp()


def _pcie(before: dict[str, Any], after: dict[str, Any]) -> list[Cause]:
    """A link narrower than it trains to (the generation drops at idle by design: not judged),
    and replays that grew: a marginal link retransmitting."""
    found = []
    old = _by_index(before)
    for device in _devices(after):
        pcie, name = device.get("pcie") or {}, f"GPU {device.get('index')}"
        now, best = pcie.get("width_current"), pcie.get("width_max")
        if _num(now) and _num(best) and now < best:
            found.append(Cause(PCIE, f"{name}: PCIe link x{now} of x{best}"))
        grew = _grew(
            old.get(device.get("index"), {}).get("pcie_replays"), device.get("pcie_replays")
        )
        if grew:
            found.append(Cause(PCIE, f"{name}: {grew:g} PCIe replays since the job started"))
    return found


def _nvlink(before: dict[str, Any], after: dict[str, Any]) -> list[Cause]:
    found = []
    old = _by_index(before)
    for device in _devices(after):
        name = f"GPU {device.get('index')}"
        links = device.get("nvlink") if isinstance(device.get("nvlink"), list) else []
        down = [str(link.get("link")) for link in links if link.get("active") is False]
        if down:
            found.append(Cause(NVLINK, f"{name}: NVLink link(s) {', '.join(down)} inactive"))
        was = {
            e.get("link"): e for e in _list(old.get(device.get("index"), {}).get("nvlink_errors"))
        }
        grown = sum(
            _grew(was.get(e.get("link"), {}).get(k), e.get(k))
            for e in _list(device.get("nvlink_errors"))
            for k in NVLINK_ERRORS
        )
        if grown:
            found.append(
                Cause(
                    NVLINK,
                    f"{name}: {grown:g} NVLink replay/recovery/CRC errors since the job started",
                )
            )
    return found


def _ib(before: dict[str, Any], after: dict[str, Any]) -> list[Cause]:
    old = _ports(before)
    found = []
    for name, counters in _ports(after).items():
        grown = {
            k: _grew(old.get(name, {}).get(k), v)
            for k, v in counters.items()
            if k in ERROR_COUNTERS
        }
        grown = {k: v for k, v in grown.items() if v}
        if grown:
            said = ", ".join(f"{k} +{v:g}" for k, v in sorted(grown.items()))
            found.append(Cause(IB, f"{name}: {said} since the job started"))
    return found


def _ports(facts: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """{"mlx5_0/1": {counter: value}} from the snapshot's fabric section."""
    fabric = facts.get("fabric") if isinstance(facts.get("fabric"), dict) else {}
    found = {}
    for device in _list(fabric.get("rdma_devices")):
        for port in _list(device.get("ports")):
            counters = (
                (port.get("counters") or {}) if isinstance(port.get("counters"), dict) else {}
            )
            inner = counters.get("counters")
            if isinstance(inner, dict):
                found[f"{device.get('name')}/{port.get('port')}"] = inner
    return found


def _names_gpu(detail: str, gpu: str, after: dict[str, Any]) -> bool:
    """Whether a finding is about GPU `gpu` (an index or UUID): by its 'GPU n' or bus id."""
    for device in _devices(after):
        if gpu in (str(device.get("index")), str(device.get("uuid"))):
            bus = str((device.get("pci") or {}).get("bus_id") or "?").lower()
            return f"GPU {device.get('index')}:" in detail or bus in detail.lower()
    return False


def _by_index(facts: dict[str, Any]) -> dict[Any, dict[str, Any]]:
    return {d.get("index"): d for d in _devices(facts)}


def _devices(facts: dict[str, Any]) -> list[dict[str, Any]]:
    return [d for d in _list((facts or {}).get("devices")) if isinstance(d, dict)]


def _list(value: Any) -> list[Any]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _grew(old: Any, new: Any) -> float:
    return new - old if _num(old) and _num(new) and new > old else 0


def _num(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
