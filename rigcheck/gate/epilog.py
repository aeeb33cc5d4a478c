"""What a finished job left behind: the epilog's judgement of two facts snapshots, the one the
prolog took before the job and the one taken after it.

New Xid events of a machine fault (not a program's own, rigcheck.facts.kernel_log.xid_catalog) and
new NVRM records without an Xid (rigcheck.facts.kernel_log.nvrm), uncorrected ECC errors or remapped
rows that grew, a hardware or thermal slowdown still active, and processes holding a GPU that were
not there before the job. Each is a Finding; the first one is the run's root-cause line (in
rigcheck.reports.root_cause's form), which is what the node is drained with. Counters that cannot be
read (an error record, a placeholder) are left out here: the quick tier's fact checks fail on them,
with their reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rigcheck.facts.kernel_log.nvrm import judge_event as judge_record
from rigcheck.facts.kernel_log.xid_catalog import NOT_FAILED, judge
from rigcheck.reports.root_cause import shorten

# Clock-event reasons that mean the hardware is protecting itself, not a setting or idleness.
SLOWDOWNS = ("hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "sw_thermal_slowdown")
ECC_COUNTERS = ("volatile_uncorrected", "aggregate_uncorrected")


@dataclass(frozen=True)
class Finding:
    key: str  # label-safe, the root-cause line's key
    detail: str

    @property
    def line(self) -> str:
        return f"{self.key}: {self.detail}"


@dataclass(frozen=True)
class ProcessScope:
    """Which GPUs' processes the epilog may blame on the job. On a node shared by several jobs
    another job's processes are not this job's leftovers: only its own GPUs are looked at, and
    when those are unknown no process is judged (`judged` False, `why` says so in the log)."""

    gpus: frozenset[str] | None = None  # GPU index or UUID strings; None: every GPU
    judged: bool = True
    why: str = ""

    def covers(self, device: dict[str, Any]) -> bool:
        if not self.judged:
            return False
        if self.gpus is None:
            return True
        return str(device.get("index")) in self.gpus or str(device.get("uuid")) in self.gpus


EVERY_GPU = ProcessScope()
UUID_PREFIXES = ("GPU-", "MIG-")


def job_gpus(env: Mapping[str, str]) -> frozenset[str] | None:
    """The job's GPUs as slurmd names them in the Prolog and Epilog environment, or None.

    slurmd sets SLURM_JOB_GPUS (GRES indices, slurm.conf(5): "Available in the Prolog and
    Epilog") and, with gres.conf's NVML environment flag, CUDA_VISIBLE_DEVICES (each GPU's
    unique id when AutoDetect gave one, else the same index): gres_common_prep_set_env() in
    SchedMD/slurm src/plugins/gres/common/gres_common.c. SLURM_STEP_GPUS is a job step's, not
    set there. UUIDs name a GPU unambiguously, so they win; a GRES index equals NVML's index
    when gres.conf lists the GPUs in PCI bus order, as AutoDetect=nvml does."""
    visible = _ids(env.get("CUDA_VISIBLE_DEVICES"))
    if visible and all(v.startswith(UUID_PREFIXES) for v in visible):
        return visible
    return _ids(env.get("SLURM_JOB_GPUS")) or visible


def process_scope(gpus: frozenset[str] | None, others: list[str] | None) -> ProcessScope:
    """Whose processes the epilog judges: the job's GPUs when Slurm named them; every GPU when
    no other job is on the node (`others`: squeue's other job ids, None when it could not say);
    else none, since another job's processes on a shared node are not a fault of this one."""
    if gpus is not None:
        named = ",".join(sorted(gpus))
        return ProcessScope(gpus, why=f"processes judged on the job's GPUs {named}")
    if others == []:
        return ProcessScope(why="processes judged on every GPU: no other job on the node")
    whose = "squeue could not say" if others is None else f"job(s) {', '.join(others)} also here"
    return ProcessScope(
        judged=False,
        why=f"GPU processes not judged: the job's GPUs are unknown (no SLURM_JOB_GPUS) and {whose}",
    )


def unknown_gpus(
    gpus: frozenset[str] | None, after: dict[str, Any], env: Mapping[str, str]
) -> str | None:
    """What is wrong when the GPUs slurmd named are not all on this node (a garbage or stale
    SLURM_JOB_GPUS / CUDA_VISIBLE_DEVICES, a gres.conf out of step with NVML); None when every
    one names a GPU here. Matching none must not make an empty set that judges no process."""
    if gpus is None:
        return None
    here = {
        str(d.get(k)) for d in _devices(after) for k in ("index", "uuid") if d.get(k) is not None
    }
    missing = sorted(gpus - here)
    if not missing:
        return None
    given = ", ".join(
        f"{k}={env[k]!r}" for k in ("SLURM_JOB_GPUS", "CUDA_VISIBLE_DEVICES") if k in env
    )
    indices = sorted(str(d.get("index")) for d in _devices(after))
    return (
        f"{given} names GPU(s) {', '.join(missing)}, not on this node (GPUs "
        f"{', '.join(indices) or 'none'}): the job's GPUs are unknown; check gres.conf"
    )


def _ids(text: str | None) -> frozenset[str] | None:
    found = frozenset(part.strip() for part in (text or "").split(",") if part.strip())
    return found or None


def leftovers(
    before: dict[str, Any] | None, after: dict[str, Any], scope: ProcessScope = EVERY_GPU
) -> list[Finding]:
    """Everything the job left; without a `before` (no prolog ran) only what needs none:
    slowdowns still active and processes still holding a GPU (those `scope` covers)."""
    deltas = [] if before is None else new_xids(before, after) + new_nvrm(before, after)
    deltas += [] if before is None else grown_ecc(before, after)
    return deltas + slowdowns(after) + held_gpus(before, after, scope)


def root_cause_line(found: list[Finding]) -> str | None:
    if not found:
        return None
    more = f" (+{len(found) - 1} more)" if len(found) > 1 else ""
    return shorten(found[0].line, suffix=more)


def new_xids(before: dict[str, Any], after: dict[str, Any]) -> list[Finding]:
    """New Xid events that are a machine fault. Those NVIDIA's catalogue calls the program's
    doing or informational (Xid 13, 31, 43: a job's own bug) drain nothing, as in the quick
    tier's test_no_machine_fault_xids; events the kept list no longer shows, only counted, do."""
    seen = {_xid_key(e) for e in _xid_events(before)}
    fresh = [e for e in _xid_events(after) if _xid_key(e) not in seen]
    faults = [e for e in fresh if _machine_fault(e)]
    if not faults:
        grown = _count(after, "xid_count") - _count(before, "xid_count") - len(fresh)
        if grown <= 0:
            return []
        return [Finding("job_left_xid", f"{grown:g} new Xid event(s) in the kernel log")]
    first = faults[0]
    codes = ", ".join(sorted({str(e.get("code")) for e in faults}))
    where = first.get("bus_id") or "a GPU"
    detail = f"{len(faults)} new Xid event(s) (Xid {codes}), first on {where}"
    return [Finding("job_left_xid", detail)]


def new_nvrm(before: dict[str, Any], after: dict[str, Any]) -> list[Finding]:
    """New NVIDIA driver records that carry no Xid (rigcheck.facts.kernel_log.nvrm: a GPU fallen off
    the bus, RmInitAdapter failed); each is a machine fault, as in the quick tier."""
    seen = {_xid_key(e) for e in _events(before, "nvrm_events")}
    fresh = [e for e in _events(after, "nvrm_events") if _xid_key(e) not in seen]
    fresh = [e for e in fresh if _record_fault(e)]  # a non-fatal SXid drains nothing
    if not fresh:
        return []
    kinds = ", ".join(sorted({str(e.get("kind")) for e in fresh}))
    where = fresh[0].get("bus_id") or "a GPU"
    return [
        Finding("job_left_nvrm", f"{len(fresh)} new NVRM record(s) ({kinds}), first on {where}")
    ]


def _record_fault(event: dict[str, Any]) -> bool:
    kind, text = str(event.get("kind")), event.get("text")
    return judge_record(kind, text if isinstance(text, str) else "").cause not in NOT_FAILED


def _machine_fault(event: dict[str, Any]) -> bool:
    code, text = event.get("code"), event.get("text")
    if not isinstance(code, int) or isinstance(code, bool):
        return True  # unreadable: judged a fault, never dropped
    return judge(code, text if isinstance(text, str) else "").cause not in NOT_FAILED


def grown_ecc(before: dict[str, Any], after: dict[str, Any]) -> list[Finding]:
    old = {d.get("index"): d for d in _devices(before)}
    found = []
    for device in _devices(after):
        was = old.get(device.get("index"), {})
        for counter in ECC_COUNTERS:
            grew = _number(device, "ecc_errors", counter) - _number(was, "ecc_errors", counter)
            if grew > 0:
                found.append(
                    Finding(
                        "job_left_ecc",
                        f"GPU {device.get('index')}: {counter} ECC errors grew by {grew:g}",
                    )
                )
                break
        rows = _number(device, "remapped_rows", "uncorrectable") - _number(
            was, "remapped_rows", "uncorrectable"
        )
        if rows > 0:
            found.append(
                Finding(
                    "job_left_ecc",
                    f"GPU {device.get('index')}: {rows:g} rows remapped for uncorrectable errors",
                )
            )
    return found


def slowdowns(after: dict[str, Any]) -> list[Finding]:
    found = []
    for device in _devices(after):
        reasons = device.get("throttle_reasons")
        active = [r for r in reasons if r in SLOWDOWNS] if isinstance(reasons, list) else []
        if active:
            detail = f"GPU {device.get('index')}: {', '.join(active)} still active"
            found.append(Finding("job_left_throttle", detail))
    return found


def held_gpus(
    before: dict[str, Any] | None, after: dict[str, Any], scope: ProcessScope = EVERY_GPU
) -> list[Finding]:
    """Processes on one of the job's GPUs after the job that were not on it before (a stuck or
    orphaned rank). GPUs outside `scope` are another job's: their processes are not looked at."""
    there = {(d.get("index"), p.get("pid")) for d in _devices(before) for p in _processes(d)}
    found = []
    for device in filter(scope.covers, _devices(after)):
        pids = [
            p.get("pid")
            for p in _processes(device)
            if (device.get("index"), p.get("pid")) not in there
        ]
        if pids:
            shown = ", ".join(str(p) for p in pids[:4])
            found.append(
                Finding(
                    "job_left_process",
                    f"GPU {device.get('index')} still held by pid {shown} after the job",
                )
            )
    return found


def _devices(facts: dict[str, Any] | None) -> list[dict[str, Any]]:
    devices = (facts or {}).get("devices")
    return [d for d in devices if isinstance(d, dict)] if isinstance(devices, list) else []


def _processes(device: dict[str, Any]) -> list[dict[str, Any]]:
    found = device.get("processes")
    return [p for p in found if isinstance(p, dict)] if isinstance(found, list) else []


def _xid_events(facts: dict[str, Any]) -> list[dict[str, Any]]:
    return _events(facts, "xid_events")


def _events(facts: dict[str, Any], key: str) -> list[dict[str, Any]]:
    events = (facts.get("kernel_log") or {}).get(key)
    return [e for e in events if isinstance(e, dict)] if isinstance(events, list) else []


def _xid_key(event: dict[str, Any]) -> tuple:
    return tuple(sorted((k, str(v)) for k, v in event.items()))


def _count(facts: dict[str, Any], key: str) -> float:
    value = (facts.get("kernel_log") or {}).get(key)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _number(device: dict[str, Any], group: str, key: str) -> float:
    value = (device.get(group) or {}).get(key) if isinstance(device.get(group), dict) else None
    return value if isinstance(value, int | float) and not isinstance(value, bool) else 0
