"""How long each clock-event reason has held one NVIDIA GPU's clocks down, in nanoseconds since
the driver loaded: NVML's cumulative counters, read through nvmlDeviceGetFieldValues.

Two snapshots (the job's start facts and the facts at blame time) give each reason's share of
the time between them. Field ids from nvml.h (NVIDIA/go-nvml pkg/nvml/nvml.h, "Field values for
Clock Throttle Reason Counters. All counters are in nanoseconds"): the perf-policy counters
74-76 since the CUDA 11.0 header (R450); the three slowdown counters only since CUDA 12.9/13.0
(R575, R580) as 251-253, renumbered 269-271 from the CUDA 13.1 header on (251-253 then mean
power smoothing). So the slowdown ids are chosen by the driver's branch, and a branch between
the two numberings reads none of them rather than another field's number.
"""

from __future__ import annotations

from typing import Any

# nvml.h names, lower case, without NVML_FI_DEV_ (PERF_POLICY_THERMAL is the older thermal counter).
PERF_POLICY = {"clocks_event_reason_sw_power_cap": 74, "perf_policy_thermal": 75,
               "clocks_event_reason_sync_boost": 76}  # fmt: skip
SLOWDOWNS = ("clocks_event_reason_sw_therm_slowdown", "clocks_event_reason_hw_therm_slowdown",
             "clocks_event_reason_hw_power_brake_slowdown")  # fmt: skip
# (first branch, last branch or None) -> the slowdown counters' first id in that range.
SLOWDOWN_IDS = {(575, 580): 251, (590, None): 269}
UNSIGNED_LONG_LONG = 3  # nvmlValueType_t NVML_VALUE_TYPE_UNSIGNED_LONG_LONG


def field_ids(branch: int) -> dict[str, int]:
    """The counters a driver of BRANCH numbers as this header history says."""
    ids = dict(PERF_POLICY)
    for (first, last), start in SLOWDOWN_IDS.items():
        if branch >= first and (last is None or branch <= last):
            ids.update({name: start + i for i, name in enumerate(SLOWDOWNS)})
    return ids


def clock_event_time(nvml, h) -> dict[str, int | None] | None:
    """Each counter's nanoseconds, None where the driver does not answer it; None when it
    answers none (a driver or board without them: said, never taken as zero)."""
    version = nvml.nvmlSystemGetDriverVersion()
    version = version.decode() if isinstance(version, bytes) else str(version)
    ids = field_ids(int(version.split(".")[0]))
    fields = nvml.nvmlDeviceGetFieldValues(h, list(ids.values()))
    found = {name: _value(field) for name, field in zip(ids, fields, strict=True)}
    return found if any(v is not None for v in found.values()) else None


def _value(field: Any) -> int | None:
    if field.nvmlReturn != 0:
        return None
    if field.valueType == UNSIGNED_LONG_LONG:
        return int(field.value.ullVal)
    return int(field.value.uiVal)
