"""Health facts of AMD GPUs through amdsmi, AMD's Python binding of libamd_smi (ROCm).

Each key is one amdsmi read, stored as the probe contract says: a value, None where the device
answers AMDSMI_STATUS_NOT_SUPPORTED, or an error record with the reason (no permission, amdsmi
not installed, the library not loading). Shapes follow amdsmi 7.0's amdsmi_interface.py: counts
are dicts of ints, unsupported PCIe counters come back as the string "N/A" (stored as None),
power caps are in microwatts (amdsmi.h: "current power cap (uW)"), PCIe speeds in MT/s. What
the ROCm 6.0-6.4 packages answer differently is read through smi_releases.py; the self-tests
run this module through each real package (tests/amdsmi_real, rigcheck/testing/amdsmi_sim).

`import amdsmi` itself fails on a host without ROCm: the PyPI wheel raises KeyError
'libamd_smi.so' (its ctypes loader found no library), not ImportError; both are error records.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable
from typing import Any

from rigcheck.facts.amd import smi_releases as releases
from rigcheck.facts.probe import error_record

INVAL = 1  # amdsmi_wrapper.AMDSMI_STATUS_INVAL
NOT_SUPPORTED = 2  # amdsmi_wrapper.AMDSMI_STATUS_NOT_SUPPORTED
NO_PERM = 10  # amdsmi_wrapper.AMDSMI_STATUS_NO_PERM
# amdsmi_wrapper.AMDSMI_MEM_PAGE_STATUS_*: what amdsmi_get_gpu_bad_page_info's "status" says.
PAGE_STATUS = {0: "retired", 1: "pending", 2: "unreservable"}
XGMI_LINK = {"U": "up", "D": "down", "X": "disabled"}  # amdsmi_get_gpu_xgmi_link_status letters
XGMI_ERROR = {0: "no_errors", 1: "error", 2: "multiple_errors"}  # AmdSmiXgmiStatus
# PCIe transfer rate per lane (MT/s) -> generation, as amdsmi_get_pcie_info reports the speed.
PCIE_GEN = {2500: 1, 5000: 2, 8000: 3, 16000: 4, 32000: 5, 64000: 6}
LINK_TYPES = {0: "internal", 1: "pcie", 2: "xgmi", 3: "not_applicable", 4: "unknown"}
KEYS = ("ras", "ras_blocks", "bad_pages", "power_cap", "pcie_link", "xgmi", "amd_firmware",
        "amd_temperature", "amd_violation", "processes")  # fmt: skip
# amdsmi_get_violation_status's kinds (amdsmi.h amdsmi_violation_status_t): processor hot,
# package power tracking (PVIOL), socket thermal (TVIOL), voltage regulator and HBM thermal.
VIOLATIONS = {"prochot": "prochot_thrm", "ppt_power": "ppt_pwr", "socket_thermal": "socket_thrm",
              "vr_thermal": "vr_thrm", "hbm_thermal": "hbm_thrm"}  # fmt: skip


def load_amdsmi() -> Any:
    return importlib.import_module("amdsmi")


def probe_amd_health(bus_ids: list[str | None], load: Callable[[], Any] = load_amdsmi) -> Any:
    """{bus id: {key: fact}} for the GPUs torch listed, and the library's own facts.

    Returns (per_device, library); when amdsmi cannot be used at all every key of every device
    is the same error record, so each check names why it cannot judge.
    """
    try:
        smi = load()
    except Exception as exc:  # KeyError without libamd_smi.so, ImportError without the wheel
        return _all_failed(bus_ids, _unusable(exc)), _unusable(exc)
    try:
        smi.amdsmi_init()
    except Exception as exc:
        reason = error_record(f"amdsmi_init failed: {_reason(smi, exc)}")
        return _all_failed(bus_ids, reason), reason
    try:
        return _probe_initialised(smi, bus_ids)
    finally:
        with contextlib.suppress(Exception):  # shutting down cannot change what was read
            smi.amdsmi_shut_down()


def _unusable(exc: Exception) -> dict[str, str]:
    advice = releases.import_advice(exc)
    return error_record(f"amdsmi is not usable here ({type(exc).__name__}: {exc}): {advice}")


def _all_failed(bus_ids: list[str | None], reason: dict[str, str]) -> dict[str, Any]:
    return {bus: {key: dict(reason) for key in KEYS} for bus in bus_ids if bus}


def _probe_initialised(smi: Any, bus_ids: list[str | None]) -> tuple[dict[str, Any], Any]:
    read = _reader(smi)
    handles = read(lambda: _handles_by_bus(smi))
    library = {
        "lib_version": read(lambda: _lib_version(smi)),
        "driver": None,
        "pairs": error_record("amdsmi listed no processor handles"),
    }
    if not isinstance(handles, dict) or "error" in handles:
        reason = handles if isinstance(handles, dict) else error_record("no processor handles")
        library["pairs"] = reason
        return _all_failed(bus_ids, reason), library
    out = {}
    for bus in bus_ids:
        if not bus:
            continue
        h = handles.get(bus.lower())
        if h is None:
            missing = error_record(f"amdsmi lists no GPU at {bus} (it sees {sorted(handles)})")
            out[bus] = {key: dict(missing) for key in KEYS}
            continue
        peers = [other for other in handles.values() if other != h]
        out[bus] = probe_device(smi, h, read, peers)
        if library["driver"] is None:
            library["driver"] = read(lambda h=h: _driver(smi, h))
    library["pairs"] = [_pair(smi, handles, bus_ids, a, b, read) for a, b in _pairs(bus_ids)]
    return out, library


def _reader(smi: Any) -> Callable[[Callable[[], Any]], Any]:
    """Run one read: its value, None for NOT_SUPPORTED, an error record for anything else."""

    def read(fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except Exception as exc:
            if getattr(exc, "err_code", None) == NOT_SUPPORTED and _is_library(smi, exc):
                return None
            return error_record(_reason(smi, exc))

    return read


def _is_library(smi: Any, exc: Exception) -> bool:
    kind = getattr(smi, "AmdSmiLibraryException", None)
    return isinstance(kind, type) and isinstance(exc, kind)


def _reason(smi: Any, exc: Exception) -> str:
    if _is_library(smi, exc) and getattr(exc, "err_code", None) == NO_PERM:
        return (
            "permission denied (AMDSMI_STATUS_NO_PERM): run as root, or add the user to the "
            "render and video groups"
        )
    text = " ".join(str(exc).split())  # AmdSmiLibraryException's text spans lines
    return f"{type(exc).__name__}: {text}".strip()


def _handles_by_bus(smi: Any) -> dict[str, Any]:
    return {
        str(smi.amdsmi_get_gpu_device_bdf(h)).lower(): h for h in smi.amdsmi_get_processor_handles()
    }


def _pairs(bus_ids: list[str | None]) -> list[tuple[int, int]]:
    n = len(bus_ids)
    return [(a, b) for a in range(n) for b in range(a + 1, n)]


def _pair(smi: Any, handles: dict, bus_ids: list, a: int, b: int, read) -> dict[str, Any]:
    """How two GPUs are joined (amdsmi_topo_get_link_type: xgmi, pcie..., and in how many hops)
    and whether each can reach the other's memory (amdsmi_is_P2P_accessible)."""
    ha, hb = (handles.get(str(bus_ids[i]).lower()) for i in (a, b))
    if ha is None or hb is None:
        missing = error_record(f"amdsmi lists no GPU at {bus_ids[a] if ha is None else bus_ids[b]}")
        return {"gpus": [a, b], "link": missing, "p2p": dict(missing)}

    def link() -> dict[str, Any]:
        info = smi.amdsmi_topo_get_link_type(ha, hb)
        kind = int(info["type"])
        return {"type": LINK_TYPES.get(kind, f"unknown_{kind}"), "hops": int(info["hops"])}

    accessible = read(lambda: {"accessible": bool(smi.amdsmi_is_P2P_accessible(ha, hb))})
    return {"gpus": [a, b], "link": read(link), "p2p": accessible}


def _lib_version(smi: Any) -> str:
    v = smi.amdsmi_get_lib_version()
    return f"{v['major']}.{v['minor']}.{v['release']}"


def _driver(smi: Any, h: Any) -> dict[str, str]:
    info = smi.amdsmi_get_gpu_driver_info(h)
    return {"name": info["driver_name"], "version": info["driver_version"]}


def probe_device(smi: Any, h: Any, read: Callable[[Callable[[], Any]], Any],
                 peers: list[Any] = ()) -> dict[str, Any]:  # fmt: skip
    """peers: the other GPUs amdsmi lists (their handles), for xGMI before ROCm 6.4."""
    return {
        "ras": read(lambda: _counts(smi.amdsmi_get_gpu_total_ecc_count(h))),
        "ras_blocks": read(lambda: _ras_blocks(smi, h, read)),
        "bad_pages": read(lambda: _bad_pages(smi, h, read)),
        "power_cap": read(lambda: _power_cap(smi, h)),
        "pcie_link": read(lambda: _pcie_link(smi, h)),
        "xgmi": read(lambda: _xgmi(smi, h, read, peers)),
        "amd_firmware": read(lambda: _firmware(smi, h)),
        "amd_temperature": read(lambda: _temperature(smi, h, read)),
        "amd_violation": read(lambda: _violation(smi, h)),
        "processes": read(lambda: _processes(smi, h)),
    }


def _counts(ec: dict[str, int]) -> dict[str, int]:
    return {
        "correctable": int(ec["correctable_count"]),
        "uncorrectable": int(ec["uncorrectable_count"]),
        "deferred": int(ec.get("deferred_count", 0)),
    }


def _ras_blocks(smi: Any, h: Any, read) -> list[dict[str, Any]]:
    """Each RAS block's state (ENABLED, DISABLED...) and, where enabled, its error counts."""
    blocks = []
    for entry in smi.amdsmi_get_gpu_ras_block_features_enabled(h):
        name, state = str(entry["block"]), str(entry["status"])
        counts = None
        if state == "ENABLED":
            counts = read(lambda n=name: _counts(smi.amdsmi_get_gpu_ecc_count(h, _block(smi, n))))
        blocks.append({"block": name, "state": state, "counts": counts})
    return blocks


def _block(smi: Any, name: str) -> Any:
    return smi.AmdSmiGpuBlock[name]


def _bad_pages(smi: Any, h: Any, read) -> dict[str, Any]:
    """Pages of HBM retired for ECC errors, by status, and the driver's threshold for them."""
    pages = releases.bad_page_list(smi.amdsmi_get_gpu_bad_page_info(h))
    out: dict[str, Any] = {status: 0 for status in PAGE_STATUS.values()}
    for page in pages:
        out[PAGE_STATUS.get(int(page["status"]), "retired")] += 1
    threshold = None  # amdsmi before 7.0 has no threshold function: unknown, as NOT_SUPPORTED
    if hasattr(smi, "amdsmi_get_gpu_bad_page_threshold"):
        threshold = read(lambda: int(smi.amdsmi_get_gpu_bad_page_threshold(h)))
    out["threshold"] = threshold  # None: NOT_SUPPORTED; an error record keeps its reason
    return out


def _power_cap(smi: Any, h: Any) -> dict[str, float]:
    info = smi.amdsmi_get_power_cap_info(h)  # microwatts, or watts before ROCm 6.1.2
    return {
        "cap_w": releases.watts(info["power_cap"]),
        "default_w": releases.watts(info["default_power_cap"]),
        "max_w": releases.watts(info["max_power_cap"]),
    }


def _number(value: Any) -> int | None:
    """amdsmi writes "N/A" where the counter is all ones (not kept on this device)."""
    return None if isinstance(value, str) else int(value)


def _gen(speed: Any) -> int | None:
    speed = _number(speed)
    return None if speed is None else PCIE_GEN.get(speed)


def _pcie_link(smi: Any, h: Any) -> dict[str, Any]:
    if not hasattr(smi, "amdsmi_get_pcie_info"):  # ROCm 6.0's amdsmi
        return releases.pcie_link_rocm60(smi, h, _number, _gen)
    info = smi.amdsmi_get_pcie_info(h)
    static, metric = info["pcie_static"], info["pcie_metric"]
    return {
        "gen_current": _gen(metric["pcie_speed"]),
        "gen_max": _gen(static["max_pcie_speed"]),
        "width_current": _number(metric["pcie_width"]),
        "width_max": _number(static["max_pcie_width"]),
        "replays": _number(metric["pcie_replay_count"]),
        "recoveries": _number(metric["pcie_l0_to_recovery_count"]),
        "nak_sent": _number(metric["pcie_nak_sent_count"]),
        "nak_received": _number(metric["pcie_nak_received_count"]),
    }


def _xgmi(smi: Any, h: Any, read, peers: list[Any]) -> dict[str, Any]:
    """The GPU's xGMI (Infinity Fabric) links: how many up, down, disabled; the error state."""
    error = read(lambda: _xgmi_error(smi, h))
    if not hasattr(smi, "amdsmi_get_gpu_xgmi_link_status"):
        return _xgmi_by_topology(smi, h, peers, error)
    status = smi.amdsmi_get_gpu_xgmi_link_status(h)
    letters = list(status["status"])
    return {
        "total_links": int(status["total_links"]),
        **{word: letters.count(letter) for letter, word in XGMI_LINK.items()},
        "error_status": _xgmi_word(error),
    }


def _xgmi_by_topology(smi: Any, h: Any, peers: list[Any], error: Any) -> dict[str, Any]:
    """Before ROCm 6.4 (no amdsmi_get_gpu_xgmi_link_status): one link up per peer GPU that
    amdsmi_topo_get_link_type (ROCm 6.0+) reports joined by xGMI in one hop.

    That answer is the KFD topology the driver built when it loaded: an xGMI io_link to each
    peer of its hive with the hop count the PSP firmware reported (kfd_crat.c
    kfd_fill_gpu_xgmi_link_to_gpu). On a fully connected platform (MI300X: 8 GPUs, 7 links
    each) a peer reached in more hops, or over PCIe, is a link that did not come up. A link
    lost after the driver loaded needs ROCm 6.4's per-link status to be seen.
    """
    direct = sum(_one_xgmi_hop(smi.amdsmi_topo_get_link_type(h, peer)) for peer in peers)
    return {
        "total_links": len(peers),
        "up": direct,
        "down": len(peers) - direct,
        "disabled": None,  # the topology cannot tell a disabled link from a down one
        "error_status": _xgmi_word(error),
        "read_from": "amdsmi_topo_get_link_type: peer GPUs one xGMI hop away (before ROCm 6.4)",
    }


def _one_xgmi_hop(link: dict[str, Any]) -> bool:
    return LINK_TYPES.get(int(link["type"])) == "xgmi" and int(link["hops"]) == 1


def _xgmi_word(error: Any) -> Any:
    """amdsmi's xGMI error status as a word; None or an error record stays as it is."""
    return XGMI_ERROR.get(error, f"unknown_{error}") if isinstance(error, int) else error


def _xgmi_error(smi: Any, h: Any) -> int | None:
    """amdsmi_gpu_xgmi_error_status, or None where the GPU does not report it.

    On MI300X, MI325X and MI355 the driver's xgmi_error file answers EINVAL (its DF 4.x has no
    FICA hooks), which amdsmi passes on as AMDSMI_STATUS_INVAL (ROCm/rocm-systems#11468;
    `amd-smi metric` shows XGMI_ERR: N/A). Those GPUs count xGMI errors in the XGMI_WAFL RAS
    block instead, which the ECC checks judge.
    """
    try:
        return int(smi.amdsmi_gpu_xgmi_error_status(h))
    except Exception as exc:
        if getattr(exc, "err_code", None) == INVAL and _is_library(smi, exc):
            return None
        raise


def _firmware(smi: Any, h: Any) -> dict[str, Any]:
    vbios = smi.amdsmi_get_gpu_vbios_info(h)
    blocks = smi.amdsmi_get_fw_info(h)["fw_list"]
    return {
        "vbios": str(vbios["version"]),
        "blocks": {getattr(b["fw_name"], "name", str(b["fw_name"])): str(b["fw_version"])
                   for b in blocks},
    }  # fmt: skip


def _temperature(smi: Any, h: Any, read) -> dict[str, Any]:
    """The hotspot (junction) sensor now, and the thresholds the GPU itself reports for it.

    amdsmi_get_temp_metric answers degrees C (amd-smi prints it as is). CRITICAL is where the
    firmware starts to slow the GPU down, EMERGENCY where it shuts down (amd-smi static --limit
    shows them as slowdown and shutdown). MI300X has no edge sensor (NOT_SUPPORTED): the hotspot
    is the one every Instinct reports. A threshold the device does not report is None.
    """
    sensor = smi.AmdSmiTemperatureType.HOTSPOT
    metric = smi.AmdSmiTemperatureMetric
    current = int(smi.amdsmi_get_temp_metric(h, sensor, metric.CURRENT))

    def limit(kind: Any) -> Any:
        return read(lambda: int(smi.amdsmi_get_temp_metric(h, sensor, kind)))

    return {
        "hotspot_c": current,
        "slowdown_c": limit(metric.CRITICAL),
        "shutdown_c": limit(metric.EMERGENCY),
    }


def _violation(smi: Any, h: Any) -> dict[str, Any] | None:
    """Whether each power or thermal limit holds the GPU's clocks down now (amdsmi's active_*
    flags) and the share of recent time it did (per_*, "greater than 0% is a violation"), per
    amdsmi.h's amdsmi_violation_status_t; None for a kind the GPU does not report ("N/A": the
    all-ones value). MI300 and later report them ("older ASICs will show unsupported"); amdsmi
    before ROCm 6.3 has no amdsmi_get_violation_status: None, as NOT_SUPPORTED."""
    if not hasattr(smi, "amdsmi_get_violation_status"):
        return None
    status = smi.amdsmi_get_violation_status(h)

    def flag(value: Any) -> bool | None:
        return None if isinstance(value, str) else bool(value)

    return {
        "active": {k: flag(status[f"active_{v}"]) for k, v in VIOLATIONS.items()},
        "percent": {k: _number(status[f"per_{v}"]) for k, v in VIOLATIONS.items()},
    }


def _processes(smi: Any, h: Any) -> list[dict[str, Any]]:
    """Processes holding the GPU, in NVML's record shape (pid, VRAM held) so one check judges
    both vendors. amdsmi_get_gpu_process_list answers dicts with "pid" and
    "memory_usage": {"vram_mem", "gtt_mem", "cpu_mem"} in bytes (amdsmi 7.0)."""
    found = releases.process_records(smi, h, smi.amdsmi_get_gpu_process_list(h))
    return [
        {"pid": int(p["pid"]), "used_bytes": _number(p["memory_usage"]["vram_mem"])} for p in found
    ]
