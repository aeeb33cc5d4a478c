"""GPU-to-GPU topology through NVML: how each pair is linked, P2P status, NUMA and CPU affinity.

What `nvidia-smi topo -m` and `nvidia-smi topo -p2p rw` show, as facts. Per GPU: its PCI bus id,
the NUMA node the kernel puts its PCI device on, the CPUs NVML calls close to it and the NUMA
nodes those CPUs belong to, and each NVLink with the device at its far end. Per pair: the NVLinks
joining them (directly or through NVSwitch), the closest PCIe common ancestor, and the four P2P
capabilities. A read that fails is an error record in place of its value; nothing here raises.
"""

from __future__ import annotations

import os
from itertools import combinations
from pathlib import Path
from typing import Any

from rigcheck.facts.nvidia.nvml import _short_bus_id, _text, nvlink_states, read
from rigcheck.facts.probe import error_record, guarded, is_error

# nvmlGpuTopologyLevel_t -> the abbreviation nvidia-smi topo -m prints (BOARD: two GPUs on one
# board, which nvidia-smi does not name).
PCIE_PATHS = {0: "BOARD", 10: "PIX", 20: "PXB", 30: "PHB", 40: "NODE", 50: "SYS"}
# nvmlGpuP2PCapsIndex_t. Spelled out because nvidia-ml-py defines NVML_P2P_CAPS_INDEX_READ as
# the tuple (0,), which the C call cannot take.
P2P_CAPS = {"read": 0, "write": 1, "nvlink": 2, "atomics": 3}
# nvmlGpuP2PStatus_t, with the letters nvidia-smi topo -p2p prints in the comments.
P2P_STATUS = {
    0: "ok",  # OK
    1: "chipset_not_supported",  # CNS
    2: "gpu_not_supported",  # GNS
    3: "topology_not_supported",  # TNS
    4: "disabled_by_regkey",  # DR
    5: "not_supported",  # NS
    6: "unknown",  # U
}
NVLINK_REMOTE = {0: "gpu", 1: "ibm_npu", 2: "switch", 255: "unknown"}
SYSFS = Path("/sys")


def _nvml():
    import pynvml  # nvidia-ml-py; imported only when probing

    return pynvml


def probe_topology(sysfs: Path = SYSFS) -> dict[str, Any]:
    """The topology of every NVIDIA GPU pair, or an error record saying why none was read."""
    try:
        nvml = _nvml()
        nvml.nvmlInit()
    except Exception as exc:
        return error_record(f"NVML unavailable ({type(exc).__name__}: {exc})")
    try:
        return guarded(lambda: _topology(nvml, sysfs))
    finally:
        guarded(nvml.nvmlShutdown)


def _topology(nvml, sysfs: Path) -> dict[str, Any]:
    numa_cpus = guarded(lambda: _numa_node_cpus(sysfs))
    handles = [nvml.nvmlDeviceGetHandleByIndex(i) for i in range(nvml.nvmlDeviceGetCount())]
    gpus = [_gpu(nvml, i, h, numa_cpus, sysfs) for i, h in enumerate(handles)]
    gpu_by_bus = {g["bus_id"]: g["index"] for g in gpus if isinstance(g["bus_id"], str)}
    for gpu in gpus:
        for link in gpu["nvlink"] if isinstance(gpu["nvlink"], list) else []:
            link["remote_gpu"] = gpu_by_bus.get(link.get("remote_bus_id"))
    pairs = [_pair(nvml, handles, gpus, a, b) for a, b in combinations(range(len(gpus)), 2)]
    return {"source": "nvml", "host_numa_cpus": numa_cpus, "gpus": gpus, "pairs": pairs}


def _gpu(nvml, index: int, h, numa_cpus: Any, sysfs: Path) -> dict[str, Any]:
    bus_id = read(lambda: _short_bus_id(_text(nvml.nvmlDeviceGetPciInfo(h).busId)))
    affinity = read(lambda: _cpu_affinity(nvml, h))
    return {
        "index": index,
        "bus_id": bus_id,
        "numa_node": guarded(lambda: _pci_numa_node(sysfs, bus_id)),
        "cpu_affinity": affinity if is_error(affinity) else format_cpulist(affinity or []),
        "cpu_numa_nodes": guarded(lambda: nodes_of_cpus(affinity, numa_cpus)),
        "nvlink": read(lambda: _nvlinks(nvml, h)),
    }


def _pci_numa_node(sysfs: Path, bus_id: Any) -> int:
    """The kernel's NUMA node for the GPU's PCI device; -1 when the firmware gives none.

    NVML's own nvmlDeviceGetNumaNodeId answers only where the GPU memory is a NUMA node
    (Grace Hopper); on x86 it is "N/A" (nvidia-smi topo -m, "GPU NUMA ID" column).
    """
    if is_error(bus_id) or bus_id is None:
        raise ValueError(f"no PCI bus id to look up ({bus_id})")
    return int((sysfs / "bus/pci/devices" / bus_id / "numa_node").read_text().strip())


def _cpu_affinity(nvml, h) -> list[int]:
    """The CPUs NVML calls ideal for this GPU, from its bitmask of 64-bit words."""
    words = max(1, -(-(os.cpu_count() or 1) // 64))
    mask = nvml.nvmlDeviceGetCpuAffinity(h, words)
    return [w * 64 + bit for w, word in enumerate(mask) for bit in range(64) if word >> bit & 1]


def _nvlinks(nvml, h) -> list[dict[str, Any]]:
    """Each NVLink the device has: active or not, and what is at its far end."""
    links = []
    for link, active in nvlink_states(nvml, h):
        entry: dict[str, Any] = {"link": link, "active": active}
        if active:
            entry.update(_far_end(nvml, h, link))
        links.append(entry)
    return links


def _far_end(nvml, h, link: int) -> dict[str, Any]:
    """What an active link ends at: a GPU or an NVSwitch, and its PCI bus id."""
    kind = read(lambda: nvml.nvmlDeviceGetNvLinkRemoteDeviceType(h, link))
    pci = read(lambda: nvml.nvmlDeviceGetNvLinkRemotePciInfo(h, link))
    return {
        "remote": NVLINK_REMOTE.get(kind, kind) if isinstance(kind, int) else kind,
        "remote_bus_id": _short_bus_id(_text(pci.busId)) if hasattr(pci, "busId") else pci,
    }


def _pair(nvml, handles, gpus, a: int, b: int) -> dict[str, Any]:
    ha, hb = handles[a], handles[b]
    level = read(lambda: nvml.nvmlDeviceGetTopologyCommonAncestor(ha, hb))
    return {
        "gpus": [a, b],
        "pcie_path": PCIE_PATHS.get(level, level) if isinstance(level, int) else level,
        "nvlink": nvlink_between(gpus[a], gpus[b]),
        "p2p": {
            cap: _status(read(lambda i=i: nvml.nvmlDeviceGetP2PStatus(ha, hb, i)))
            for cap, i in P2P_CAPS.items()
        },
    }


def _status(code: Any) -> Any:
    return P2P_STATUS.get(code, f"status_{code}") if isinstance(code, int) else code


def nvlink_between(a: dict[str, Any], b: dict[str, Any]) -> Any:
    """NVLinks joining two GPUs: {"links": n, "via": "direct"|"nvswitch"|None}.

    Direct links end at the other GPU's bus id. Through NVSwitch every GPU reaches every other,
    and a pair is as wide as the narrower of the two GPUs' active links into the switches: what
    nvidia-smi topo -m prints as NV18 on an HGX H100.
    """
    for gpu in (a, b):
        if is_error(gpu["nvlink"]):
            return gpu["nvlink"]
    direct = sum(1 for x in a["nvlink"] or [] if x["active"] and x.get("remote_gpu") == b["index"])
    switched = min(_switch_links(a), _switch_links(b))
    if direct:
        return {"links": direct, "via": "direct"}
    if switched:
        return {"links": switched, "via": "nvswitch"}
    return {"links": 0, "via": None}


def _switch_links(gpu: dict[str, Any]) -> int:
    return sum(1 for x in gpu["nvlink"] or [] if x["active"] and _ends_at_switch(x))


def _ends_at_switch(link: dict[str, Any]) -> bool:
    """A switch by NVML's word, or (drivers without the remote type) a far end that is no GPU."""
    if link.get("remote") is not None:
        return link["remote"] == "switch"
    return link.get("remote_gpu") is None and isinstance(link.get("remote_bus_id"), str)


def _numa_node_cpus(sysfs: Path) -> dict[str, str]:
    """Each NUMA node that has CPUs -> its CPU list, as the kernel writes it ("0-31,64-95")."""
    nodes = {}
    for path in sorted((sysfs / "devices/system/node").glob("node[0-9]*")):
        cpus = (path / "cpulist").read_text().strip()
        if cpus:
            nodes[path.name.removeprefix("node")] = cpus
    if not nodes:
        raise FileNotFoundError(f"no NUMA nodes under {sysfs / 'devices/system/node'}")
    return nodes


def nodes_of_cpus(cpus: Any, numa_cpus: Any) -> list[int]:
    """The NUMA nodes whose CPUs the affinity touches."""
    for value in (cpus, numa_cpus):
        if is_error(value):
            raise ValueError(value["error"])
    wanted = set(cpus or [])
    return sorted(int(n) for n, listed in numa_cpus.items() if wanted & set(parse_cpulist(listed)))


def parse_cpulist(text: str) -> list[int]:
    """'0-3,8,10-11' -> [0, 1, 2, 3, 8, 10, 11] (the kernel's cpulist format)."""
    cpus: list[int] = []
    for part in filter(None, text.strip().split(",")):
        first, _, last = part.partition("-")
        cpus.extend(range(int(first), int(last or first) + 1))
    return cpus


def format_cpulist(cpus: list[int]) -> str:
    """[0, 1, 2, 3, 8] -> '0-3,8'."""
    ranges: list[list[int]] = []
    for cpu in sorted(set(cpus)):
        if ranges and cpu == ranges[-1][1] + 1:
            ranges[-1][1] = cpu
        else:
            ranges.append([cpu, cpu])
    return ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in ranges)
