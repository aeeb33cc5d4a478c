"""A machine profile that answers what a rigcheck facts snapshot recorded.

The inverse of the NVML probes: fed back through pynvml and the simulator, each device record
must come out as it went in (tests/replay/test_synthetic.py). That checks the synthetic
snapshots have the shape the real probes write, with the real binding in the loop.
"""

from __future__ import annotations

from typing import Any

from rigcheck.facts.nvidia.clock_event_time import PERF_POLICY, SLOWDOWNS
from rigcheck.facts.nvidia.counters import FABRIC_STATES, RECOVERY_ACTIONS
from rigcheck.facts.nvidia.nvml import NVLINK_VERSIONS, THROTTLE_REASONS

NVLINK_CODES = {version: code for code, version in NVLINK_VERSIONS.items()}
NVLINK_ERRORS = ("replay", "recovery", "crc_flit", "crc_data")  # nvmlNvLinkErrorCounter_t order


def profile_from_snapshot(snapshot: dict[str, Any], name: str = "from-facts") -> dict[str, Any]:
    driver = snapshot["software"]["nvidia_driver"]
    major, minor = driver["cuda_driver_version"].split(".")
    return {
        "name": name,
        "source": f"rigcheck facts snapshot ({snapshot.get('origin', {}).get('kind')})",
        "driver_version": driver["version"],
        "cuda_driver_version": int(major) * 1000 + int(minor) * 10,
        "gpus": [gpu_from_device(d) for d in snapshot["devices"]],
    }


def gpu_from_device(d: dict[str, Any]) -> dict[str, Any]:
    pci, fw = d["pci"], d["firmware"]
    answers: dict[str, str] = {}
    gpu = {
        "name": d["name"],
        "uuid": d["uuid"],
        "serial": d["serial"],
        "vbios": fw and fw["vbios"],
        "inforom_image": fw and fw["inforom_image"],
        "inforom_objects": fw and {"oem": fw["inforom_oem"]},
        "pci": {
            "bus_id": pci["bus_id"],
            "device_id": f"0x{int(pci['device_id'], 16) << 16 | int(pci['vendor_id'], 16):08X}",
            "subsystem_id": pci["subsystem_id"],
        },
        "compute_capability": [int(p) for p in d["compute_capability"].split(".")],
        "memory": {
            "total": d["memory_total_bytes"],
            "free": d["memory_free_bytes"],
            "used": d["memory_total_bytes"] - d["memory_free_bytes"],
        },
        "ecc_mode": _pair(d["ecc"]),
        "ecc_errors": _ecc(d, answers),
        "retired_pages": _retired(d["retired_pages"]),
        "remapped_rows": d["remapped_rows"] and {k: int(v) for k, v in d["remapped_rows"].items()},
        "clocks": {"sm": d["clocks"]["sm_mhz"], "mem": d["clocks"]["mem_mhz"]},
        "max_clocks": {"sm": d["clocks"]["sm_max_mhz"], "mem": d["clocks"]["mem_max_mhz"]},
        **_applications_clocks(d["applications_clocks"]),
        "clock_ids_sm": _clock_ids(d["clock_limits"]),
        "clock_event_reasons": _reasons(d["throttle_reasons"]),
        "temperature_c": d["temperature_c"],
        "temperature_thresholds": d["temperature_thresholds"],
        "power": _power(d["power"]),
        "pcie": {**d["pcie"], "replays": d["pcie_replays"]},
        "persistence_mode": int(d["persistence_mode"]),
        "mig_mode": _pair(d["mig"]),
        "processes": {"compute": d["processes"], "graphics": []},
        "fabric": _fabric(d["fabric"]),
        "nvlink": _nvlink(d["nvlink"], d["nvlink_errors"], answers),
        "nvml_numa_node": None,
        "answers": answers,
    }
    # The counters the facts hold; a driver that answered none: every one unanswered.
    times = d.get("clock_event_time_ns")
    gpu["clock_event_time_ns"] = dict(times) if isinstance(times, dict) else _no_times()
    if d.get("recovery_action") is not None:
        codes = {name: code for code, name in RECOVERY_ACTIONS.items()}
        gpu["recovery_action"] = codes[d["recovery_action"]]
    return gpu


def _no_times() -> dict[str, None]:
    return dict.fromkeys([*PERF_POLICY, *SLOWDOWNS])


def _pair(state: dict[str, bool] | None) -> list[int] | None:
    return None if state is None else [int(state["current"]), int(state["pending"])]


def _ecc(d: dict[str, Any], answers: dict[str, str]) -> dict[str, int] | None:
    """Counts by location; the totals NVML sums are DRAM + SRAM."""
    totals, where = d["ecc_errors"], d["ecc_by_location"]
    if totals is None:
        return None
    if where is None:  # the totals without the split: all in DRAM, the split not supported
        answers["nvmlDeviceGetMemoryErrorCounter"] = "NOT_SUPPORTED"
        return {
            **{f"dram_{k.split('_')[1]}_{k.split('_')[0]}": v for k, v in totals.items()},
            **{f"sram_{k.split('_')[1]}_{k.split('_')[0]}": 0 for k in totals},
        }
    return dict(where)


def _retired(pages: dict[str, Any] | None) -> dict[str, Any] | None:
    if pages is None:
        return None
    return {
        "pending": int(pages["pending"]),
        "double_bit": [0x1000 * (i + 1) for i in range(pages["double_bit"])],
        "single_bit": [0x1000 * (i + 1) for i in range(pages["single_bit"])],
    }


def _applications_clocks(clocks: dict[str, int] | None) -> dict[str, Any]:
    if clocks is None:
        return {"applications_clocks": None, "default_applications_clocks": None}
    return {
        "applications_clocks": {"sm": clocks["sm_mhz"], "mem": clocks["mem_mhz"]},
        "default_applications_clocks": {
            "sm": clocks["default_sm_mhz"],
            "mem": clocks["default_mem_mhz"],
        },
    }


def _clock_ids(limits: dict[str, int | None] | None) -> dict[str, int | None]:
    limits = limits or {}
    return {
        "app_target": limits.get("sm_app_target_mhz"),
        "app_default": limits.get("sm_app_default_mhz"),
        "customer_boost_max": limits.get("sm_customer_boost_max_mhz"),
    }


def _reasons(names: list[str] | None) -> int | None:
    if names is None:
        return None
    bits = {name: bit for bit, name in THROTTLE_REASONS.items()}
    return sum(bits.get(n) or int(n.removeprefix("unknown_0x"), 16) for n in names)


def _power(power: dict[str, float | None]) -> dict[str, int | None]:
    def mw(watts: float | None) -> int | None:
        return None if watts is None else round(watts * 1000)

    return {
        "enforced_limit_mw": mw(power["limit_w"]),
        "default_limit_mw": mw(power["default_limit_w"]),
        "min_limit_mw": None if power["max_limit_w"] is None else 100_000,  # not in the facts
        "max_limit_mw": mw(power["max_limit_w"]),
        "draw_mw": mw(power["draw_w"]),
    }


def _fabric(fabric: dict[str, Any] | None) -> dict[str, Any] | None:
    if fabric is None:
        return None
    codes = {name: code for code, name in FABRIC_STATES.items()}
    return {
        "state": codes[fabric["state"]],
        "status": fabric["status"],
        "clique_id": fabric["clique_id"],
        "cluster_uuid": fabric["cluster_uuid"],
    }


def _nvlink(links: list | None, errors: list | None, answers: dict[str, str]) -> Any:
    """One version code for the GPU (the facts keep one per link; profiles use the first)."""
    if not links:
        return None
    counts = {}
    for entry in errors or []:
        values = [entry[k] for k in NVLINK_ERRORS]
        if all(v is None for v in values):
            answers["nvmlDeviceGetNvLinkErrorCounter"] = "NOT_SUPPORTED"
        counts[str(entry["link"])] = [v or 0 for v in values]
    return {
        "links": len(links),
        "version_code": links[0]["nvml_code"],
        "remote": "switch",
        "inactive": [x["link"] for x in links if not x["active"]],
        "remote_bus_ids": ["0000:05:00.0"],
        "errors": counts,
    }
