"""A fake `amdsmi` module built from a snapshot's AMD device records, answering in the shapes
amdsmi 7.0's amdsmi_interface.py returns (dicts of ints, "N/A" strings for counters the device
does not keep, power in microwatts, PCIe speeds in MT/s, enums for blocks and firmware ids) and
raising its exception (AmdSmiLibraryException with err_code, e.g. 2 NOT_SUPPORTED, 10 NO_PERM).
A probe fed it must write the records back."""

from __future__ import annotations

from enum import IntEnum
from types import SimpleNamespace
from typing import Any

NOT_SUPPORTED, NO_PERM, DRIVER_NOT_LOADED = 2, 10, 34
STATUS_TEXT = {
    NOT_SUPPORTED: "AMDSMI_STATUS_NOT_SUPPORTED - Feature not supported",
    NO_PERM: "AMDSMI_STATUS_NO_PERM - Permission Denied",
    DRIVER_NOT_LOADED: "AMDSMI_STATUS_DRIVER_NOT_LOADED - Driver not loaded",
}
# amdsmi_wrapper's AMDSMI_GPU_BLOCK_* values (one bit per block).
GPU_BLOCKS = ("UMC", "SDMA", "GFX", "MMHUB", "ATHUB", "PCIE_BIF", "HDP", "XGMI_WAFL", "DF",
              "SMN", "SEM", "MP0", "MP1", "FUSE", "MCA", "VCN", "JPEG", "IH", "MPIO")  # fmt: skip
MT_PER_S = {1: 2500, 2: 5000, 3: 8000, 4: 16000, 5: 32000, 6: 64000}
PAGE_STATUS = {"retired": 0, "pending": 1, "unreservable": 2}
XGMI_ERROR = {"no_errors": 0, "error": 1, "multiple_errors": 2}


class AmdSmiException(Exception):
    pass


class AmdSmiLibraryException(AmdSmiException):
    """As amdsmi_exception.py: err_code is the (positive) amdsmi_status_t."""

    def __init__(self, err_code: int):
        super().__init__(err_code)
        self.err_code = abs(err_code)
        self.err_info = STATUS_TEXT.get(self.err_code, "AMDSMI_STATUS_UNKNOWN_ERROR")

    def __str__(self) -> str:
        return f"Error code:\n\t{self.err_code} | {self.err_info}"


class AmdSmiParameterException(AmdSmiException):
    pass


AmdSmiGpuBlock = IntEnum("AmdSmiGpuBlock", {n: 1 << i for i, n in enumerate(GPU_BLOCKS)})
# amdsmi_wrapper's AMDSMI_TEMPERATURE_TYPE_* (HOTSPOT and JUNCTION are both 1) and AMDSMI_TEMP_*.
AmdSmiTemperatureType = IntEnum("AmdSmiTemperatureType", {"EDGE": 0, "HOTSPOT": 1, "VRAM": 2,
                                                          "HBM_0": 3})  # fmt: skip
AmdSmiTemperatureMetric = IntEnum(
    "AmdSmiTemperatureMetric", {"CURRENT": 0, "MAX": 1, "MIN": 2, "CRITICAL": 5, "EMERGENCY": 7}
)
TEMP_FIELD = {"CURRENT": "hotspot_c", "CRITICAL": "slowdown_c", "EMERGENCY": "shutdown_c"}


def need(value: Any) -> Any:
    if value is None:
        raise AmdSmiLibraryException(NOT_SUPPORTED)
    return value


def _na(value: Any) -> Any:
    return "N/A" if value is None else value  # _validate_if_max_uint's answer for all ones


LINK_TYPES = {"internal": 0, "pcie": 1, "xgmi": 2, "not_applicable": 3, "unknown": 4}


def fake_amdsmi(
    devices: list[dict[str, Any]], driver: str = "6.8.5", topology: Any = None
) -> SimpleNamespace:
    """A module whose answers are the devices' records (and the topology's pairs, by bus id);
    `failures` maps (function name, bus id or None for all) to an err_code the call raises."""
    pairs = {}
    for p in (topology or {}).get("pairs", []):
        a, b = (topology["gpus"][i]["bus_id"] for i in p["gpus"])
        pairs[a, b] = pairs[b, a] = p
    by_handle = {object(): d for d in devices}
    handles = list(by_handle)
    fw_names = sorted({n for d in devices for n in (d["amd_firmware"] or {}).get("blocks", {})})
    fw_block = IntEnum("AmdSmiFwBlock", {n: 30 + i for i, n in enumerate(fw_names)})
    failures: dict[tuple[str, str | None], int] = {}

    def call(name: str, fn):
        def wrapped(h=None, *args):
            bus = by_handle[h]["pci"]["bus_id"] if h in by_handle else None
            for key in ((name, bus), (name, None)):
                if key in failures:
                    raise AmdSmiLibraryException(failures[key])
            if h is not None and h not in by_handle:
                raise AmdSmiParameterException(h)
            return fn(by_handle[h], *args) if h is not None else fn()

        return wrapped

    def ecc_count(d, block):
        if not isinstance(block, AmdSmiGpuBlock):
            raise AmdSmiParameterException(block)
        entry = next(b for b in need(d["ras_blocks"]) if b["block"] == block.name)
        return _ec(need(entry["counts"]))

    def pair(name: str, fn):
        def wrapped(ha, hb):
            a, b = by_handle[ha]["pci"]["bus_id"], by_handle[hb]["pci"]["bus_id"]
            for key in ((name, a), (name, b), (name, None)):
                if key in failures:
                    raise AmdSmiLibraryException(failures[key])
            return fn(pairs[a, b])

        return wrapped

    def temp_metric(d, sensor, metric):
        """Only the hotspot sensor is kept, as on MI300X (no edge sensor: NOT_SUPPORTED)."""
        if not isinstance(sensor, AmdSmiTemperatureType):
            raise AmdSmiParameterException(sensor)
        if not isinstance(metric, AmdSmiTemperatureMetric):
            raise AmdSmiParameterException(metric)
        if sensor is not AmdSmiTemperatureType.HOTSPOT or metric.name not in TEMP_FIELD:
            raise AmdSmiLibraryException(NOT_SUPPORTED)
        return need(need(d["amd_temperature"])[TEMP_FIELD[metric.name]])

    module = SimpleNamespace(
        AmdSmiTemperatureType=AmdSmiTemperatureType,
        AmdSmiTemperatureMetric=AmdSmiTemperatureMetric,
        amdsmi_get_temp_metric=call("amdsmi_get_temp_metric", temp_metric),
        amdsmi_get_gpu_process_list=call(
            "amdsmi_get_gpu_process_list", lambda d: [_proc(p) for p in need(d["processes"])]
        ),
        amdsmi_topo_get_link_type=pair(
            "amdsmi_topo_get_link_type",
            lambda p: {"hops": p["link"]["hops"], "type": LINK_TYPES[p["link"]["type"]]},
        ),
        amdsmi_is_P2P_accessible=pair("amdsmi_is_P2P_accessible", lambda p: p["p2p"]["accessible"]),
        AmdSmiException=AmdSmiException,
        AmdSmiLibraryException=AmdSmiLibraryException,
        AmdSmiParameterException=AmdSmiParameterException,
        AmdSmiGpuBlock=AmdSmiGpuBlock,
        AmdSmiFwBlock=fw_block,
        failures=failures,
        amdsmi_init=call("amdsmi_init", lambda: None),
        amdsmi_shut_down=lambda: None,
        amdsmi_get_processor_handles=call("amdsmi_get_processor_handles", lambda: handles),
        amdsmi_get_lib_version=call(
            "amdsmi_get_lib_version",
            lambda: {"major": 24, "minor": 6, "release": 2, "build": "0"},
        ),
        amdsmi_get_gpu_device_bdf=call("bdf", lambda d: d["pci"]["bus_id"]),
        amdsmi_get_gpu_driver_info=call(
            "amdsmi_get_gpu_driver_info",
            lambda d: {"driver_name": "amdgpu", "driver_version": driver, "driver_date": "N/A"},
        ),
        amdsmi_get_gpu_total_ecc_count=call(
            "amdsmi_get_gpu_total_ecc_count", lambda d: _ec(need(d["ras"]))
        ),
        amdsmi_get_gpu_ras_block_features_enabled=call(
            "amdsmi_get_gpu_ras_block_features_enabled",
            lambda d: [{"block": b["block"], "status": b["state"]} for b in need(d["ras_blocks"])],
        ),
        amdsmi_get_gpu_ecc_count=call("amdsmi_get_gpu_ecc_count", ecc_count),
        amdsmi_get_gpu_bad_page_info=call(
            "amdsmi_get_gpu_bad_page_info", lambda d: _pages(need(d["bad_pages"]))
        ),
        amdsmi_get_gpu_bad_page_threshold=call(
            "amdsmi_get_gpu_bad_page_threshold",
            lambda d: need(need(d["bad_pages"])["threshold"]),
        ),
        amdsmi_get_power_cap_info=call(
            "amdsmi_get_power_cap_info", lambda d: _power(need(d["power_cap"]))
        ),
        amdsmi_get_pcie_info=call("amdsmi_get_pcie_info", lambda d: _pcie(need(d["pcie_link"]))),
        amdsmi_get_gpu_xgmi_link_status=call(
            "amdsmi_get_gpu_xgmi_link_status", lambda d: _links(need(d["xgmi"]))
        ),
        amdsmi_gpu_xgmi_error_status=call(
            "amdsmi_gpu_xgmi_error_status",
            lambda d: XGMI_ERROR[need(need(d["xgmi"])["error_status"])],
        ),
        amdsmi_get_gpu_vbios_info=call(
            "amdsmi_get_gpu_vbios_info",
            lambda d: {
                "name": "AMD MI300X",
                "build_date": "2024/05/07 10:50",
                "part_number": need(d["amd_firmware"])["vbios"],
                "version": need(d["amd_firmware"])["vbios"],
            },
        ),
        amdsmi_get_fw_info=call(
            "amdsmi_get_fw_info",
            lambda d: {
                "fw_list": [
                    {"fw_name": fw_block[n], "fw_version": v}
                    for n, v in need(d["amd_firmware"])["blocks"].items()
                ]
            },
        ),
    )
    return module


def _ec(counts: dict[str, int]) -> dict[str, int]:
    return {
        "correctable_count": counts["correctable"],
        "uncorrectable_count": counts["uncorrectable"],
        "deferred_count": counts["deferred"],
    }


def _pages(pages: dict[str, Any]) -> list[dict[str, Any]]:
    statuses = [code for name, code in PAGE_STATUS.items() for _ in range(pages[name])]
    return [
        {"value": i, "page_address": 0x1000 * (i + 1), "page_size": 4096, "status": s}
        for i, s in enumerate(statuses)
    ]


def _power(cap: dict[str, float]) -> dict[str, int]:
    uw = {k: int(v * 1e6) for k, v in cap.items()}  # amdsmi.h: power caps in microwatts
    return {"power_cap": uw["cap_w"], "default_power_cap": uw["default_w"], "dpm_cap": 0,
            "min_power_cap": 0, "max_power_cap": uw["max_w"]}  # fmt: skip


def _pcie(link: dict[str, Any]) -> dict[str, Any]:
    return {
        "pcie_static": {
            "max_pcie_width": link["width_max"],
            "max_pcie_speed": MT_PER_S[link["gen_max"]],
            "pcie_interface_version": link["gen_max"],
            "slot_type": "OAM",
        },
        "pcie_metric": {
            "pcie_width": link["width_current"],
            "pcie_speed": MT_PER_S[link["gen_current"]],
            "pcie_bandwidth": 0,
            "pcie_replay_count": _na(link["replays"]),
            "pcie_l0_to_recovery_count": _na(link["recoveries"]),
            "pcie_replay_roll_over_count": 0,
            "pcie_nak_sent_count": _na(link["nak_sent"]),
            "pcie_nak_received_count": _na(link["nak_received"]),
            "pcie_lc_perf_other_end_recovery_count": "N/A",
        },
    }


def _links(xgmi: dict[str, Any]) -> dict[str, Any]:
    status = ["U"] * xgmi["up"] + ["D"] * xgmi["down"] + ["X"] * xgmi["disabled"]
    return {"status": status, "total_links": xgmi["total_links"]}


def _proc(proc: dict[str, Any]) -> dict[str, Any]:
    """amdsmi_get_gpu_process_list's entry (amdsmi 7.0): memory in bytes, name "N/A" if blank."""
    vram = proc["used_bytes"]
    return {
        "name": "python3",
        "pid": proc["pid"],
        "mem": vram or 0,
        "engine_usage": {"gfx": 0, "enc": 0},
        "memory_usage": {"gtt_mem": 0, "cpu_mem": 0, "vram_mem": _na(vram)},
        "cu_occupancy": "N/A",
    }
