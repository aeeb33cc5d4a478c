"""A simulated node built from a snapshot's AMD device records: the C-level values libamd_smi
would hold for a machine whose facts are those records (power caps back to microwatts, PCIe
generations back to MT/s, firmware strings back to the integers amdsmi formats). A probe run
through the real amdsmi over it must write the records back: the round trip of the self-tests.
"""

from __future__ import annotations

from typing import Any

from rigcheck.facts.amd.smi import VIOLATIONS
from rigcheck.testing.amdsmi_sim.node import Node

MT_PER_S = {1: 2500, 2: 5000, 3: 8000, 4: 16000, 5: 32000, 6: 64000}
ALL_ONES_64 = 0xFFFFFFFFFFFFFFFF  # a counter the device does not keep (amdsmi prints "N/A")
PAGE_STATUS = {"retired": "RESERVED", "pending": "PENDING", "unreservable": "UNRESERVABLE"}
XGMI_LINK = {"up": "UP", "down": "DOWN", "disabled": "DISABLE"}
XGMI_ERROR = {"no_errors": "NO_ERRORS", "error": "ERROR", "multiple_errors": "MULTIPLE_ERRORS"}
LINK_TYPE = {"internal": "INTERNAL", "pcie": "PCIE", "xgmi": "XGMI",
             "not_applicable": "NOT_APPLICABLE", "unknown": "UNKNOWN"}  # fmt: skip
# amdsmi_interface formats these firmware blocks as dotted hex bytes, PM as dotted decimal bytes.
HEX_FIRMWARE = {"PSP_SOSDRV", "TA_RAS", "TA_XGMI", "UVD", "VCE", "VCN"}
DEC_FIRMWARE = {"PM", "PLDM_BUNDLE"}


def node_from_snapshot(snapshot: dict[str, Any], driver: str = "6.8.5") -> Node:
    devices = [device_profile(d, driver) for d in snapshot["devices"]]
    return Node(devices, pairs_from_topology(snapshot.get("topology") or {}))


def device_profile(record: dict[str, Any], driver: str = "6.8.5") -> dict[str, Any]:
    """The C-level profile of one device record (facts that are None become NOT_SUPPORTED)."""
    profile: dict[str, Any] = {
        "bdf": record["pci"]["bus_id"],
        "driver": {"driver_name": "amdgpu", "driver_version": driver, "driver_date": ""},
        "not_supported": [],
    }
    for key, encode in ENCODERS.items():
        value = record.get(key)
        if value is None:
            profile["not_supported"].extend(SYMBOLS[key])
            continue
        profile.update(encode(value))
    return profile


def pairs_from_topology(topology: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    pairs = {}
    for pair in topology.get("pairs", []):
        a, b = (topology["gpus"][i]["bus_id"] for i in pair["gpus"])
        link, p2p = pair["link"] or {}, pair["p2p"] or {}
        pairs[a, b] = {
            "hops": link.get("hops", 0),
            "type": LINK_TYPE[link.get("type", "unknown")],
            "p2p": p2p.get("accessible", False),
        }
    return pairs


def _counts(c: dict[str, int]) -> dict[str, int]:
    return {"correctable_count": c["correctable"], "uncorrectable_count": c["uncorrectable"],
            "deferred_count": c["deferred"]}  # fmt: skip


def _ras(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "ras_blocks": {b["block"]: b["state"] for b in blocks},
        "ecc_blocks": {b["block"]: _counts(b["counts"]) for b in blocks if b["counts"]},
    }


def _bad_pages(pages: dict[str, Any]) -> dict[str, Any]:
    records = [
        {"page_address": 0x1000 * (n + 1), "page_size": 4096,
         "status": "AMDSMI_MEM_PAGE_STATUS_" + PAGE_STATUS[status]}
        for status in PAGE_STATUS for n in range(pages[status])
    ]  # fmt: skip
    return {"bad_pages": records, "bad_page_threshold": pages["threshold"]}


def _power_cap(cap: dict[str, float]) -> dict[str, Any]:
    uw = {k: round(v * 1e6) for k, v in cap.items()}  # amdsmi.h: microwatts (ROCm 6.1.2 on)
    caps = {"power_cap": uw["cap_w"], "default_power_cap": uw["default_w"], "dpm_cap": 0,
            "min_power_cap": 0, "max_power_cap": uw["max_w"]}  # fmt: skip
    return {"power_cap": caps}


def _counter(value: int | None) -> int:
    return ALL_ONES_64 if value is None else value


def _pcie(link: dict[str, Any]) -> dict[str, Any]:
    """amdsmi_pcie_info_t (ROCm 6.1 on), and ROCm 6.0's link status, link caps (both
    amdsmi_pcie_info_t of that release: lanes, speed in MT/s) and PCIe replay counter."""
    return {
        "pcie_link_status": {
            "pcie_lanes": link["width_current"],
            "pcie_speed": MT_PER_S[link["gen_current"]],
        },
        "pcie_link_caps": {
            "pcie_lanes": link["width_max"],
            "pcie_speed": MT_PER_S[link["gen_max"]],
        },
        "pci_replay_counter": _counter(link["replays"]),
        "pcie": {
            "pcie_static": {
                "max_pcie_width": link["width_max"],
                "max_pcie_speed": MT_PER_S[link["gen_max"]],
                "pcie_interface_version": link["gen_max"],
                "slot_type": "AMDSMI_CARD_FORM_FACTOR_OAM",
            },
            "pcie_metric": {
                "pcie_width": link["width_current"],
                "pcie_speed": MT_PER_S[link["gen_current"]],
                "pcie_replay_count": _counter(link["replays"]),
                "pcie_l0_to_recovery_count": _counter(link["recoveries"]),
                "pcie_nak_sent_count": _counter(link["nak_sent"]),
                "pcie_nak_received_count": _counter(link["nak_received"]),
            },
        },
    }


def _xgmi(x: dict[str, Any]) -> dict[str, Any]:
    status = [f"AMDSMI_XGMI_LINK_{XGMI_LINK[k]}" for k in XGMI_LINK for _ in range(x[k])]
    return {
        "xgmi_links": {"total_links": x["total_links"], "status": status},
        "xgmi_error": "AMDSMI_XGMI_STATUS_" + XGMI_ERROR[x["error_status"]],
    }


def firmware_number(block: str, text: str) -> int:
    """The integer libamd_smi holds for a firmware version amdsmi_get_fw_info formats as text."""
    short = block.removeprefix("AMDSMI_").removeprefix("FW_ID_")
    if short in HEX_FIRMWARE:
        return int(text.replace(".", ""), 16)
    if short in DEC_FIRMWARE:
        return int("".join(f"{int(part):02x}" for part in text.split(".")), 16)
    return int(text)


def _firmware(fw: dict[str, Any]) -> dict[str, Any]:
    return {
        "vbios": {"name": "AMD MI300X", "build_date": "2024/05/07 10:50",
                  "part_number": fw["vbios"], "version": fw["vbios"]},
        "firmware": {_fw_constant(b): firmware_number(b, v) for b, v in fw["blocks"].items()},
    }  # fmt: skip


def _fw_constant(block: str) -> str:
    return block if block.startswith("AMDSMI_") else "AMDSMI_" + block


def _temperature(t: dict[str, Any]) -> dict[str, Any]:
    metrics = {"CURRENT": t["hotspot_c"], "CRITICAL": t["slowdown_c"],
               "EMERGENCY": t["shutdown_c"]}  # fmt: skip
    return {"temperature": {"HOTSPOT": {k: v for k, v in metrics.items() if v is not None}}}


def _violation(v: dict[str, Any]) -> dict[str, Any]:
    """amdsmi_violation_status_t's active_ (uint8) and per_ (uint64) fields; a kind the GPU does
    not report holds all ones, which amdsmi prints as "N/A"."""
    struct: dict[str, Any] = {}
    for kind, field in VIOLATIONS.items():
        active, percent = v["active"][kind], v["percent"][kind]
        struct[f"active_{field}"] = 0xFF if active is None else int(active)
        struct[f"per_{field}"] = ALL_ONES_64 if percent is None else percent
    return {"violation": struct}


def _processes(found: list[dict[str, Any]]) -> dict[str, Any]:
    """amdsmi_proc_info_t records. amdsmi passes vram_mem through as a number (no "N/A" for
    it in any release from 6.0 to 7.0), so a record without one cannot come from amdsmi."""
    if any(p["used_bytes"] is None for p in found):
        raise ValueError("amdsmi always reports a process's vram_mem: used_bytes cannot be None")
    return {
        "processes": [
            {"name": "python3", "pid": p["pid"], "mem": p["used_bytes"],
             "memory_usage": {"vram_mem": p["used_bytes"]}}
            for p in found
        ]
    }  # fmt: skip


ENCODERS = {
    "ras": lambda v: {"ecc_total": _counts(v)},
    "ras_blocks": _ras,
    "bad_pages": _bad_pages,
    "power_cap": _power_cap,
    "pcie_link": _pcie,
    "xgmi": _xgmi,
    "amd_firmware": _firmware,
    "amd_temperature": _temperature,
    "amd_violation": _violation,
    "processes": _processes,
}
# The symbols that answer NOT_SUPPORTED where a record says the device did.
SYMBOLS = {
    "ras": ["amdsmi_get_gpu_total_ecc_count"],
    "ras_blocks": ["amdsmi_get_gpu_ras_block_features_enabled"],
    "bad_pages": ["amdsmi_get_gpu_bad_page_info"],
    "power_cap": ["amdsmi_get_power_cap_info"],
    "pcie_link": ["amdsmi_get_pcie_info"],
    "xgmi": ["amdsmi_get_gpu_xgmi_link_status"],
    "amd_firmware": ["amdsmi_get_gpu_vbios_info"],
    "amd_temperature": ["amdsmi_get_temp_metric"],
    "amd_violation": ["amdsmi_get_violation_status"],
    "processes": ["amdsmi_get_gpu_process_list"],
}
