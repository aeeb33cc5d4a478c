"""Judging a burn-in trace: pure functions, one per check, each returning the problems found.

A judge returns a list of problem lines (empty: the check passes) or raises:
- NotApplicable: the check does not apply (one device: no node median) -> skip with the reason;
- NotAvailable: the host does not expose the reading (a VM's CPU temperature) -> "not
  available" on the cpu class, a failure on accelerator classes (fail closed);
- CannotJudge: the trace lacks what the check needs, or has the wrong type -> failure.
Values are read with explicit type checks: a string, a bool or NaN in a series is never a number.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from rigcheck.burnin.limits import Limits
from rigcheck.burnin.trace import phase
from rigcheck.facts.kernel_log.nvrm import judge_event as nvrm_catalogue
from rigcheck.facts.kernel_log.xid_catalog import NOT_FAILED
from rigcheck.facts.kernel_log.xid_catalog import judge as xid_catalogue

# Clock event reasons that mean the GPU slowed itself down to protect itself; sw_power_cap
# (holding at the power limit) is how a GPU under full load is meant to run.
SLOWDOWN_REASONS = (
    "hw_slowdown",
    "sw_thermal_slowdown",
    "hw_thermal_slowdown",
    "hw_power_brake_slowdown",
    # AMD (amdsmi_get_violation_status, rigcheck/burnin/amd_sampler.py): processor hot, socket
    # thermal (TVIOL), voltage regulator and HBM thermal. Its ppt_power (package power
    # tracking, PVIOL) is an MI300X at its power cap under a dense GEMM, as sw_power_cap is.
    "prochot",
    "socket_thermal",
    "vr_thermal",
    "hbm_thermal",
)
WARMUP_S = 5.0  # boost and fans settle; never more than a tenth of the phase
MAX_NULL_FRACTION = 0.5  # more failed readings than this and a series judges nothing
COUNTERS = {
    "ecc": ("ecc_uncorrected", "ecc_corrected"),
    "remaps": ("remapped_rows_uncorrectable", "remapped_rows_correctable", "remap_pending"),
    "pcie": ("pcie_replays",),
}
# AMD GPUs count deferred errors too and retire HBM pages where NVIDIA remaps rows (amdsmi).
COUNTERS_ROCM = {
    "ecc": ("ecc_uncorrected", "ecc_corrected", "ecc_deferred"),
    "remaps": ("bad_pages_retired", "bad_pages_pending", "bad_pages_unreservable"),
    "pcie": ("pcie_replays",),
}


class NotApplicable(Exception):
    """The check does not apply to this class or this trace."""


class NotAvailable(Exception):
    """The host does not expose a reading the check needs."""


class CannotJudge(Exception):
    """The trace lacks what the check needs, or holds it with the wrong type."""


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def label(device: dict[str, Any]) -> str:
    """'gpu3 (NVIDIA H100 80GB HBM3, 0000:5d:00.0)': the GPU a message names."""
    bus = device.get("bus_id")
    return f"{device['id']} ({device['name']}{', ' + bus if isinstance(bus, str) else ''})"


def load_window(trace: dict[str, Any]) -> tuple[float, float]:
    """The GEMM phase less its warm-up: where clocks, power and throughput are judged."""
    span = phase(trace, "gemm")
    if span is None:
        raise CannotJudge("the trace has no GEMM phase: the load never ran")
    start, end = span
    return start + min(WARMUP_S, (end - start) / 10), end


def series(
    trace: dict[str, Any],
    device: dict[str, Any],
    name: str,
    window: tuple[float, float] | None = None,
) -> list[tuple[float, float]]:
    """(t, value) of one telemetry column in a window; fails closed on a column of failures."""
    samples = device["samples"]
    if name not in samples:
        reason = (trace.get("unavailable") or {}).get(name) or "not in the trace"
        raise NotAvailable(f"{label(device)}: {name} not recorded: {reason}")
    start, end = window or (-math.inf, math.inf)
    picked = [
        (t, v) for t, v in zip(samples["t_s"], samples[name], strict=True) if start <= t <= end
    ]
    good = [(t, float(v)) for t, v in picked if is_number(v)]
    if not picked:
        raise CannotJudge(f"{label(device)}: no {name} samples in {start:.0f}-{end:.0f} s")
    if len(good) < len(picked) * (1 - MAX_NULL_FRACTION):
        raise CannotJudge(
            f"{label(device)}: {len(picked) - len(good)} of {len(picked)} {name} readings failed "
            "or are not numbers; the sampler could not read the GPU (check `nvidia-smi -q`, or "
            "`amd-smi metric` on AMD GPUs)"
        )
    return good


def _median(points: list[tuple[float, float]]) -> float:
    return statistics.median(v for _, v in points)


def slowdown(trace: dict[str, Any], limits: Limits) -> list[str]:
    """Thermal, hardware or power-brake slowdown during the load."""
    allowed = limits.limit("slowdown_fraction_max")
    problems = []
    for d in trace["devices"]:
        if "reasons" not in d["samples"]:
            reason = (trace.get("unavailable") or {}).get("reasons") or "not in the trace"
            if trace["backend"] == "rocm" and reason != "not in the trace":
                raise NotApplicable(f"{label(d)}: violation status not judged: {reason}")
            raise NotAvailable(f"{label(d)}: clock event reasons not recorded: {reason}")
        rows = list(zip(d["samples"]["t_s"], d["samples"]["reasons"], strict=True))
        if sum(not isinstance(r, list) for _, r in rows) > len(rows) * MAX_NULL_FRACTION:
            raise CannotJudge(f"{label(d)}: most clock event reason readings failed")
        bad = [(t, sorted(set(r) & set(SLOWDOWN_REASONS))) for t, r in rows if isinstance(r, list)]
        bad = [(t, r) for t, r in bad if r]
        if bad and len(bad) > allowed * len(rows):
            seen = sorted({x for _, r in bad for x in r})
            problems.append(
                f"{label(d)}: {', '.join(seen)} in {len(bad)} of {len(rows)} samples, first at "
                f"{bad[0][0]:.0f} s"
            )
    return problems


def clock_floor(trace: dict[str, Any], limits: Limits) -> list[str]:
    """The sustained (median) clock under load against the class's floor."""
    fraction = limits.limit("clock_floor_fraction")
    if fraction is None:
        raise NotApplicable(f"{limits.spec.name} states no clock floor under load")
    window, problems = load_window(trace), []
    for d in trace["devices"]:
        top = d["limits"].get("clock_max_mhz")
        if not is_number(top):
            raise CannotJudge(f"{label(d)}: the maximum clock was not read ({top!r})")
        sustained, floor = _median(series(trace, d, "clock_mhz", window)), fraction * top
        if sustained < floor:
            problems.append(
                f"{label(d)}: {sustained:,.0f} MHz median under load, floor {floor:,.0f} MHz "
                f"({fraction:.0%} of its {top:,.0f} MHz maximum)"
            )
    return problems


def clock_spread(trace: dict[str, Any], limits: Limits) -> list[str]:
    """No device's sustained clock more than the spec's percentage below the node's median."""
    spread = limits.limit("node_clock_spread_max")
    if spread is None:
        raise NotApplicable(f"{limits.spec.name} states no clock spread limit")
    if len(trace["devices"]) < 2:
        raise NotApplicable("one device: no node median to compare it with")
    window = load_window(trace)
    sustained = {d["id"]: _median(series(trace, d, "clock_mhz", window)) for d in trace["devices"]}
    node = statistics.median(sustained.values())
    return [
        f"{label(d)}: {sustained[d['id']]:,.0f} MHz median under load, "
        f"{1 - sustained[d['id']] / node:.1%} below the node's median {node:,.0f} MHz "
        f"(limit {spread:.0%})"
        for d in trace["devices"]
        if sustained[d["id"]] < node * (1 - spread)
    ]


def temperature(trace: dict[str, Any], limits: Limits) -> list[str]:
    """The hottest reading stays under the slowdown threshold less the class's margin."""
    margin = limits.limit("temperature_margin_c")
    if margin is None:
        raise NotApplicable(f"{limits.spec.name} states no temperature margin")
    problems = []
    for d in trace["devices"]:
        threshold = d["limits"].get("slowdown_temp_c")
        if not is_number(threshold):
            raise NotAvailable(f"{label(d)}: no slowdown temperature threshold was read")
        t, hottest = max(series(trace, d, "temperature_c"), key=lambda p: p[1])
        if hottest >= threshold - margin:
            problems.append(
                f"{label(d)}: {hottest:.0f} C at {t:.0f} s, limit {threshold - margin:.0f} C "
                f"(slowdown threshold {threshold:.0f} C less {margin:g} C)"
            )
        problems += _hbm_temperature(trace, d, margin)
    return problems


def _hbm_temperature(trace: dict[str, Any], d: dict[str, Any], margin: float) -> list[str]:
    """An AMD GPU's HBM sensor against its own CRITICAL limit, where the GPU reports both
    (MI300X reports no HBM temperature: its HBM-thermal violation flag is judged instead)."""
    threshold = d["limits"].get("hbm_slowdown_temp_c")
    column = d["samples"].get("hbm_temperature_c") or []
    if not is_number(threshold) or not any(is_number(v) for v in column):
        return []
    t, hottest = max(series(trace, d, "hbm_temperature_c"), key=lambda p: p[1])
    if hottest < threshold - margin:
        return []
    return [f"{label(d)}: HBM {hottest:.0f} C at {t:.0f} s, limit {threshold - margin:.0f} C "
            f"(its HBM slowdown threshold {threshold:.0f} C less {margin:g} C)"]  # fmt: skip


def power(trace: dict[str, Any], limits: Limits) -> list[str]:
    """The 90th-percentile power under load reaches the class's fraction of TDP."""
    fraction, tdp = limits.limit("power_fraction_of_tdp"), limits.tdp_w
    if fraction is None or tdp is None:
        raise NotApplicable(f"{limits.spec.name} states no power fraction of TDP")
    window, problems = load_window(trace), []
    for d in trace["devices"]:
        values = sorted(v for _, v in series(trace, d, "power_w", window))
        p90 = values[min(len(values) - 1, int(0.9 * len(values)))]
        if p90 < fraction * tdp:
            cap = d["limits"].get("power_limit_w")
            capped = f", enforced power limit {cap:.0f} W" if is_number(cap) else ""
            problems.append(
                f"{label(d)}: {p90:.0f} W (90th percentile under load) is {p90 / tdp:.0%} of "
                f"the {tdp:.0f} W TDP, below {fraction:.0%}{capped}"
            )
    return problems


def link_width(trace: dict[str, Any], platform_width: int | None = None) -> list[str]:
    """The PCIe width read while the load ran against the widest the board and slot can train
    (NVML's max), or the narrower width the platform wires (AWS g4dn: x8, platforms/): a link
    that stays narrow under load is a seating, riser or lane fault. The idle reading is not
    judged anywhere: NVIDIA documents it may narrow when the GPU is not in use."""
    window, problems = load_window(trace), []
    for d in trace["devices"]:
        if "pcie_width" not in d["samples"]:
            raise NotApplicable(f"{label(d)}: the trace has no PCIe width (an older rigcheck)")
        top = d["limits"].get("pcie_width_max")
        if not is_number(top):
            raise CannotJudge(f"{label(d)}: the maximum PCIe width was not read ({top!r})")
        want = min(top, platform_width) if platform_width else top
        loaded = _median(series(trace, d, "pcie_width", window))
        if loaded < want:
            wired = f", the platform wires x{platform_width}" if platform_width else ""
            problems.append(
                f"{label(d)}: x{loaded:.0f} under load (median of the burn-in's readings), "
                f"max x{top:.0f}{wired}"
            )
    return problems


def counters(trace: dict[str, Any], limits: Limits, kind: str) -> list[str]:
    """New ECC errors, row remaps or PCIe replays during the load, against the spec's limits."""
    allowed = limits.errors
    if allowed is None:
        raise NotApplicable(f"{limits.spec.name} has no error counters to judge")
    problems = []
    names = (COUNTERS_ROCM if trace["backend"] == "rocm" else COUNTERS)[kind]
    for d in trace["devices"]:
        for name in names:
            before, after = (_counter(d, side, name) for side in ("before", "after"))
            if before is None and after is None:
                continue  # NVML: not supported on this device (no row remapping before Ampere)
            if before is None or after is None:
                raise CannotJudge(f"{label(d)}: {name} read {before!r} before, {after!r} after")
            new, limit = after - before, allowed.get(name, 0)
            if new > limit:
                problems.append(f"{label(d)}: {new} new {name} (limit {limit})")
    return problems


def _counter(device: dict[str, Any], side: str, name: str) -> int | None:
    block = device[f"counters_{side}"]
    if "error" in block and isinstance(block["error"], str):
        raise CannotJudge(f"{label(device)}: counters {side} the load: {block['error']}")
    value = block.get(name, {"error": "not in the trace"})
    if isinstance(value, dict):
        raise CannotJudge(f"{label(device)}: {name} {side} the load: {value.get('error')}")
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise CannotJudge(f"{label(device)}: {name} {side} the load is {value!r}, not a count")
    return value


def xid(trace: dict[str, Any], limits: Limits) -> list[str]:
    """Xid events in the kernel log during the burn-in (rigcheck.burnin.events reads them)."""
    allowed = limits.errors
    if allowed is None or trace["backend"] == "rocm":
        raise NotApplicable(f"{limits.spec.name} has no Xid events (not an NVIDIA class)")
    events = trace["events"]["xid"]
    if isinstance(events, dict):
        raise CannotJudge(f"Xid events could not be read: {events.get('error')}")
    if len(events) <= allowed.get("xid", 0):
        return []
    return [_xid_line(e) for e in events]


def _xid_line(event: dict[str, Any]) -> str:
    """One Xid event with what NVIDIA's catalogue says it is and what to do (xid_catalog.py)."""
    xid = xid_catalogue(event["code"], str(event.get("text") or ""))
    return (
        f"Xid {event['code']} at {event['t_s']:.0f} s on {event.get('device') or 'an unnamed GPU'}"
        + (f": {event['text']}" if event.get("text") else "")
        + f" ({xid.cause}: {xid.action})"
    )


def nvrm(trace: dict[str, Any], limits: Limits) -> list[str]:
    """NVRM fault records during the burn-in (a GPU fallen off the bus, RmInitAdapter, GSP or
    GFW boot failures: rigcheck.burnin.nvrm_events reads them). Each is a machine fault: no
    allowance. A trace recorded before rigcheck read them cannot say there were none."""
    if limits.errors is None or trace["backend"] == "rocm":
        raise NotApplicable(f"{limits.spec.name} has no NVRM records (not an NVIDIA class)")
    events = trace["events"].get("nvrm")
    if events is None:
        raise CannotJudge(
            "this trace was recorded before rigcheck read NVRM records (a GPU fallen off the "
            "bus with no Xid): run the burn-in again, or read `sudo dmesg | grep NVRM`"
        )
    if isinstance(events, dict):
        raise CannotJudge(f"NVRM records could not be read: {events.get('error')}")
    by_bus = {d.get("bus_id"): d for d in trace["devices"]}
    faults = [e for e in events if _nvrm_fault(e).cause not in NOT_FAILED]  # a non-fatal SXid
    return [_nvrm_line(e, by_bus.get(e.get("device"))) for e in faults]


def _nvrm_fault(event: dict[str, Any]):
    return nvrm_catalogue(str(event["kind"]), str(event.get("text") or ""))


def _nvrm_line(event: dict[str, Any], device: dict[str, Any] | None) -> str:
    """One record, on the loaded GPU it names where it names one, with its meaning and action."""
    fault = _nvrm_fault(event)
    where = label(device) if device else event.get("device") or "an unnamed GPU"
    return (
        f"NVRM {event['kind']} at {event['t_s']:.0f} s on {where}: {event.get('text')} "
        f"({fault.meaning}; {fault.cause}: {fault.action})"
    )


def gemm_repeats(trace: dict[str, Any]) -> list[str]:
    """Every checked GEMM on a device gives the same checksum as its first."""
    problems = []
    for d in trace["devices"]:
        w = d["windows"]
        if sum(w["checks"]) == 0:
            raise CannotJudge(f"{label(d)}: no GEMM result was checked (did the load run?)")
        bad = [(t, n) for t, n in zip(w["t_s"], w["mismatches"], strict=True) if n]
        changed = [t for t, c in zip(w["t_s"], w["checksum"], strict=True) if c != w["checksum"][0]]
        if bad or changed:
            first = min([t for t, _ in bad] + changed)
            problems.append(
                f"{label(d)}: {sum(n for _, n in bad) or len(changed)} of {sum(w['checks'])} "
                f"repeats of the same GEMM differ from the first, first at {first:.0f} s"
            )
    return problems


def gemm_across_devices(trace: dict[str, Any]) -> list[str]:
    """Devices of one model agree on the checksum of the same GEMM on the same inputs."""
    by_model: dict[str, list[dict[str, Any]]] = {}
    for d in trace["devices"]:
        by_model.setdefault(d["name"], []).append(d)
    groups = [g for g in by_model.values() if len(g) > 1]
    if not groups:
        raise NotApplicable("no two devices of one model: nothing to compare across")
    problems = []
    for group in groups:
        first = {d["id"]: d["windows"]["checksum"][:1] for d in group}
        if not all(first.values()):
            raise CannotJudge("a device recorded no GEMM checksum")
        values = [v[0] for v in first.values()]
        majority = max(set(values), key=values.count)
        if values.count(majority) * 2 <= len(values):
            problems.append(f"{group[0]['name']}: no majority checksum among {len(values)} devices")
            continue
        problems += [
            f"{label(d)}: checksum {first[d['id']][0]} differs from {majority} on the other "
            f"{values.count(majority)} {d['name']} devices"
            for d in group
            if first[d["id"]][0] != majority
        ]
    return problems


def memory_pattern(trace: dict[str, Any], limits: Limits) -> list[str]:
    """The pattern test wrote, read back and compared most of the free memory, without error."""
    fraction, problems = limits.limit("memory_test_fraction") or 0.0, []
    for d in trace["devices"]:
        m = d["memory_test"]
        if "error" in m:
            raise CannotJudge(f"{label(d)}: the memory pattern test did not run: {m['error']}")
        if not m["passes"] or m["bytes_tested"] == 0:
            raise CannotJudge(f"{label(d)}: the memory pattern test tested nothing")
        free = m.get("bytes_free")
        if is_number(free) and m["bytes_tested"] < fraction * free * 0.99 and not m.get("capped"):
            problems.append(
                f"{label(d)}: tested {m['bytes_tested'] / 2**30:.1f} GiB of "
                f"{free / 2**30:.1f} GiB free, less than {fraction:.0%}"
            )
        if m["errors"]:
            e = m["first_error"] or {}
            problems.append(
                f"{label(d)}: {m['errors']} words read back wrong; first in pattern "
                f"{e.get('pattern')} at byte {e.get('offset_bytes')}: expected "
                f"{e.get('expected', 0):#010x}, found {e.get('found', 0):#010x}"
            )
    return problems


def throughput(trace: dict[str, Any], limits: Limits) -> list[str]:
    """Per-device TFLOP/s does not drop more than the spec's percentage from the first minute."""
    drop = limits.limit("throughput_drop_max")
    start, end = load_window(trace)
    baseline_end = start + min(60.0, (end - start) / 3)
    span = baseline_end - start
    problems = []
    for d in trace["devices"]:
        points = [
            (t, v)
            for t, v in zip(d["windows"]["t_s"], d["windows"]["tflops"], strict=True)
            if start <= t <= end and is_number(v)
        ]
        first = [v for t, v in points if t <= baseline_end]
        later = [(t, v) for t, v in points if t > baseline_end]
        if not first or not later:
            raise CannotJudge(f"{label(d)}: too few GEMM windows to compare ({len(points)})")
        baseline = statistics.median(first)
        t_low, low = min(_rolling_medians(later, span), key=lambda p: p[1])
        if low < baseline * (1 - drop):
            problems.append(
                f"{label(d)}: {low:,.2f} TFLOP/s around {t_low:.0f} s, {1 - low / baseline:.0%} "
                f"below its first {span:.0f} s ({baseline:,.2f}); limit {drop:.0%}"
            )
    return problems


def _rolling_medians(points: list[tuple[float, float]], span: float) -> list[tuple[float, float]]:
    """The median over each span-long stretch, so one slow window on a busy host is not a drop."""
    out = []
    for i, (t, _) in enumerate(points):
        inside = [v for u, v in points[i:] if u < t + span]
        if points[-1][0] - t >= span * 0.99 or i == 0:
            out.append((t, statistics.median(inside)))
    return out


def devices_loaded(trace: dict[str, Any], expected: int | None) -> list[str]:
    """Every device of the node was loaded, at once, and ran its GEMM windows."""
    problems = [
        f"{label(d)}: {d['error']}" for d in trace["devices"] if isinstance(d.get("error"), str)
    ]
    problems += [
        f"{label(d)}: ran no GEMM window" for d in trace["devices"] if not d["windows"]["t_s"]
    ]
    if expected is not None and expected > 0 and len(trace["devices"]) != expected:
        problems.append(
            f"the trace loaded {len(trace['devices'])} devices, the node has {expected}"
        )
    return problems
