"""Fakes of what the counter probes read (NVML's counter calls, sysfs AER files), built from a
snapshot's own device record, so a probe fed them must write that record back."""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Any

import pynvml

from rigcheck.facts import clock_limits, counters

AER_LINES = {  # the per-type lines the kernel writes before the total (drivers/pci/pcie/aer.c)
    "correctable": ["RxErr", "BadTLP", "BadDLLP", "Rollover", "Timeout", "TOTAL_ERR_COR"],
    "nonfatal": ["DLP", "SDES", "TLP", "FCP", "CmpltTO", "MalfTLP", "TOTAL_ERR_NONFATAL"],
    "fatal": ["DLP", "SDES", "TLP", "FCP", "CmpltTO", "MalfTLP", "TOTAL_ERR_FATAL"],
}


# The binding's own error classes: a stand-in whose NVMLError is Exception would swallow
# rigcheck's own TypeErrors as if NVML had raised them.
NotSupported = pynvml.NVMLError_NotSupported
FunctionNotFound = pynvml.NVMLError_FunctionNotFound  # a driver that does not export the call


# The pynvml names every fake NVML module needs: its error classes and the constants the probes
# pass back into the calls (the fakes key their answers on them).
NVML_CONSTANTS = {
    "NVMLError": pynvml.NVMLError,
    "NVMLError_NotSupported": NotSupported,
    "NVMLError_FunctionNotFound": FunctionNotFound,
    "NVML_CLOCK_SM": "sm",
    "NVML_CLOCK_MEM": "mem",
    "NVML_MEMORY_ERROR_TYPE_UNCORRECTED": "uncorrected",
    "NVML_MEMORY_ERROR_TYPE_CORRECTED": "corrected",
    "NVML_VOLATILE_ECC": "volatile",
    "NVML_AGGREGATE_ECC": "aggregate",
    "NVML_NVLINK_MAX_LINKS": 18,
    "NVML_FEATURE_ENABLED": 1,
}


def write_aer(sysfs: Path, device: dict[str, Any]) -> None:
    """sysfs aer_dev_* files holding the device's counts (none where pcie_aer is None)."""
    folder = sysfs / device["pci"]["bus_id"]
    folder.mkdir(parents=True, exist_ok=True)
    aer = device["pcie_aer"]
    if aer is None:
        return
    for key, name in counters.AER_FILES.items():
        lines = [f"{n} {aer[key] if n.startswith('TOTAL') else 0}" for n in AER_LINES[key]]
        (folder / name).write_text("\n".join(lines) + "\n")


def add_counter_fakes(nvml: Any, device: dict[str, Any]) -> Any:
    """Give a fake pynvml the counter calls, answering from the device's record."""
    not_supported = nvml.NVMLError_NotSupported

    def need(value: Any) -> Any:
        if value is None:
            raise not_supported()
        return value

    for name, const in counters.NVLINK_COUNTERS.items():
        setattr(nvml, const, name)  # the constant is the name the probe stores the count under
    links = {entry["link"]: entry for entry in device["nvlink_errors"] or []}

    def nvlink_counter(h, link, counter):
        return need(links[link][counter])

    ecc = device["ecc_by_location"]

    def ecc_counter(h, kind, span, where):
        return need(ecc)[f"{where}_{kind}_{span}"]

    fabric = device["fabric"]
    states = {name: code for code, name in counters.FABRIC_STATES.items()}
    fw, clocks = device["firmware"], device["applications_clocks"]
    temps = device["temperature_thresholds"]
    limits = device["clock_limits"]
    for name, const in clock_limits.CLOCK_IDS.items():
        setattr(nvml, const, name)  # the id is the name the probe stores the clock under
    nvml.__dict__.update(
        nvmlDeviceGetClock=lambda h, clock, clock_id: need(need(limits)[clock_id]),
        NVML_MEMORY_LOCATION_DRAM="dram",
        NVML_MEMORY_LOCATION_SRAM="sram",
        NVML_INFOROM_OEM="oem",
        NVML_TEMPERATURE_THRESHOLD_SLOWDOWN="slowdown",
        NVML_TEMPERATURE_THRESHOLD_SHUTDOWN="shutdown",
        nvmlDeviceGetPcieReplayCounter=lambda h: need(device["pcie_replays"]),
        nvmlDeviceGetNvLinkErrorCounter=nvlink_counter,
        nvmlDeviceGetMemoryErrorCounter=ecc_counter,
        nvmlDeviceGetGpuFabricInfo=lambda h, info: _fabric_info(info, need(fabric), states),
        nvmlDeviceGetVbiosVersion=lambda h: need(fw)["vbios"].encode(),
        nvmlDeviceGetInforomImageVersion=lambda h: need(fw)["inforom_image"],
        nvmlDeviceGetInforomVersion=lambda h, which: need(fw)["inforom_oem"],
        nvmlDeviceGetApplicationsClock=lambda h, c: need(clocks)[f"{c}_mhz"],
        nvmlDeviceGetDefaultApplicationsClock=lambda h, c: need(clocks)[f"default_{c}_mhz"],
        nvmlDeviceGetTemperatureThreshold=lambda h, which: need(temps)[f"{which}_c"],
    )
    return nvml


def _fabric_info(info: Any, fabric: dict[str, Any], states: dict[str, int]) -> int:
    """As the C call does: fill the caller's nvmlGpuFabricInfo_t through its pointer."""
    target = ctypes.cast(info, ctypes.POINTER(counters.FabricInfo)).contents
    ctypes.memmove(target.clusterUuid, bytes.fromhex(fabric["cluster_uuid"]), 16)
    target.status, target.cliqueId = fabric["status"], fabric["clique_id"]
    target.state = states[fabric["state"]]
    return 0
