"""The simulated libnvidia-ml's NVLink, fabric, CPU-affinity and topology symbols (library.py holds
the library, its registry and the per-device symbols). Importing the package registers these.
"""

from __future__ import annotations

import ctypes
from typing import Any

from rigcheck.testing.nvml_sim import capi
from rigcheck.testing.nvml_sim.capi import value, write
from rigcheck.testing.nvml_sim.library import HANDLE_BASE, NvmlStatus, need, symbol


# --- NVLink ---
def _link(lib, h, link, call) -> tuple[dict[str, Any], dict[str, Any]]:
    """(GPU, link record); NOT_SUPPORTED without NVLink, INVALID_ARGUMENT past its last link."""
    gpu = lib.gpu(h)
    nvlink = lib.field(gpu, "nvlink", call)
    n = value(link)
    if not 0 <= n < nvlink["links"]:
        raise NvmlStatus(capi.INVALID_ARGUMENT)
    return gpu, nvlink


@symbol("nvmlDeviceGetNvLinkState")
def _link_state(lib, h, link, out):
    _, nvlink = _link(lib, h, link, "nvmlDeviceGetNvLinkState")
    write(out, ctypes.c_uint, 0 if value(link) in nvlink.get("inactive", []) else 1)
    return capi.SUCCESS


@symbol("nvmlDeviceGetNvLinkVersion")
def _link_version(lib, h, link, out):
    _, nvlink = _link(lib, h, link, "nvmlDeviceGetNvLinkVersion")
    write(out, ctypes.c_uint, nvlink["version_code"])
    return capi.SUCCESS


@symbol("nvmlDeviceGetNvLinkErrorCounter")
def _link_errors(lib, h, link, counter, out):
    _, nvlink = _link(lib, h, link, "nvmlDeviceGetNvLinkErrorCounter")
    if value(counter) not in (0, 1, 2, 3):  # DL_REPLAY, DL_RECOVERY, DL_CRC_FLIT, DL_CRC_DATA
        return capi.INVALID_ARGUMENT
    counts = nvlink.get("errors", {}).get(str(value(link)), [0, 0, 0, 0])
    write(out, ctypes.c_ulonglong, counts[value(counter)])
    return capi.SUCCESS


@symbol("nvmlDeviceGetNvLinkRemoteDeviceType")
def _link_remote_type(lib, h, link, out):
    _, nvlink = _link(lib, h, link, "nvmlDeviceGetNvLinkRemoteDeviceType")
    write(out, ctypes.c_uint, {"gpu": 0, "switch": 2}[nvlink["remote"]])
    return capi.SUCCESS


@symbol("nvmlDeviceGetNvLinkRemotePciInfo_v2")
def _link_remote_pci(lib, h, link, out):
    _, nvlink = _link(lib, h, link, "nvmlDeviceGetNvLinkRemotePciInfo_v2")
    ends = nvlink["remote_bus_ids"]
    bus_id = ends[value(link) % len(ends)].upper()
    domain, bus, rest = bus_id.split(":")
    info = capi.PciInfo(busId=f"{int(domain, 16):08X}:{bus}:{rest}".encode(),
                        domain=int(domain, 16), bus=int(bus, 16))  # fmt: skip
    write(out, capi.PciInfo, info)
    return capi.SUCCESS


# --- fabric ---
def _fabric_fields(lib, h, call) -> dict[str, Any]:
    fabric = need(lib, h, "fabric", call)
    return {
        "clusterUuid": (ctypes.c_ubyte * 16)(*bytes.fromhex(fabric["cluster_uuid"])),
        "status": fabric["status"],
        "cliqueId": fabric["clique_id"],
        "state": fabric["state"],
    }


@symbol("nvmlDeviceGetGpuFabricInfo")
def _fabric(lib, h, out):
    write(
        out,
        capi.GpuFabricInfo,
        capi.GpuFabricInfo(**_fabric_fields(lib, h, "nvmlDeviceGetGpuFabricInfo")),
    )
    return capi.SUCCESS


@symbol("nvmlDeviceGetGpuFabricInfoV")
def _fabric_v(lib, h, out):
    asked = capi.read_struct(out, ctypes.c_uint).value
    if asked != capi.struct_version(capi.GpuFabricInfoV2, 2):
        return capi.ARGUMENT_VERSION_MISMATCH  # v3 (R560+) is not simulated
    info = capi.GpuFabricInfoV2(
        version=asked, healthMask=0, **_fabric_fields(lib, h, "nvmlDeviceGetGpuFabricInfoV")
    )
    write(out, capi.GpuFabricInfoV2, info)
    return capi.SUCCESS


# --- topology ---
@symbol("nvmlDeviceGetCpuAffinity")
def _cpu_affinity(lib, h, words, out):
    cpus = parse_cpulist(need(lib, h, "cpu_affinity", "nvmlDeviceGetCpuAffinity"))
    n = value(words)
    mask = [0] * n
    for cpu in cpus:
        if cpu // 64 < n:
            mask[cpu // 64] |= 1 << (cpu % 64)
    where, room = capi.address(out)
    if room < n * 8:
        raise capi.SimulatedCrash(f"{room}-byte affinity array for {n} words")
    for i, word in enumerate(mask):
        ctypes.c_ulonglong.from_address(where + 8 * i).value = word
    return capi.SUCCESS


def parse_cpulist(text: str) -> list[int]:
    cpus: list[int] = []
    for part in filter(None, text.split(",")):
        first, _, last = part.partition("-")
        cpus.extend(range(int(first), int(last or first) + 1))
    return cpus


def _index(lib, h) -> int:
    lib.gpu(h)
    return ((ctypes.cast(h, ctypes.c_void_p).value or 0) - HANDLE_BASE) // 0x100


@symbol("nvmlDeviceGetTopologyCommonAncestor")
def _ancestor(lib, h1, h2, out):
    a, b = _index(lib, h1), _index(lib, h2)
    levels = {"BOARD": 0, "PIX": 10, "PXB": 20, "PHB": 30, "NODE": 40, "SYS": 50}
    write(out, ctypes.c_uint, levels[lib.machine["topology"]["pcie_paths"][a][b]])
    return capi.SUCCESS


# nvmlGpuP2PStatus_t
P2P_STATUSES = {
    "ok": 0,
    "chipset_not_supported": 1,
    "gpu_not_supported": 2,
    "topology_not_supported": 3,
    "disabled_by_regkey": 4,
    "not_supported": 5,
}


@symbol("nvmlDeviceGetP2PStatus")
def _p2p(lib, h1, h2, index, out):
    a, b = _index(lib, h1), _index(lib, h2)
    caps = {0: "read", 1: "write", 2: "nvlink", 3: "atomics", 4: "prop"}
    cap = caps.get(value(index))
    if cap is None:
        return capi.INVALID_ARGUMENT
    status = P2P_STATUSES[lib.machine["topology"]["p2p"][cap]]
    write(out, ctypes.c_uint, status if a != b else 0)
    return capi.SUCCESS
