"""AMD nodes for the campaign: the MI300X platform profile answered by the simulated libamd_smi
(rigcheck/testing/amdsmi_sim), read by rigcheck's AMD probe through the real amdsmi package, and
the signatures a fault leaves in what libamd_smi answers (its C-level structs, never the facts)."""

from __future__ import annotations

import copy
import random
from itertools import combinations
from pathlib import Path
from typing import Any
from unittest import mock

from rigcheck.facts.amd import devices as amd_devices
from rigcheck.facts.amd import smi as amd_smi
from rigcheck.facts.nvidia import counters
from rigcheck.testing.amdsmi_sim import import_amdsmi
from rigcheck.testing.amdsmi_sim.node import Node as SimulatedNode
from rigcheck.testing.amdsmi_sim.profiles import load_profile

PAGE = "AMDSMI_MEM_PAGE_STATUS_"
VIOLATION_FIELDS = amd_smi.VIOLATIONS  # the fact's kind -> amdsmi_violation_status_t's field


def amd_machine(profile: str, bus_ids: list[str]) -> dict[str, Any]:
    """The platform profile's C-level answers, one device per bus id (what libamd_smi holds)."""
    data = load_profile(profile)
    gpus = [{**copy.deepcopy(data["device"]), "bdf": bus} for bus in bus_ids]
    return {"gpus": gpus, "pair": data["pair"], "lib_version": data["lib_version"]}


def amd_facts(base: dict[str, Any], machine: dict[str, Any], folder: Path) -> dict[str, Any]:
    """The snapshot with its AMD facts read by rigcheck's probe through the real amdsmi over the
    simulated library: the torch view lists the GPUs still on the bus."""
    snapshot = copy.deepcopy(base)
    present = {g["bdf"] for g in machine["gpus"]}
    torch = [d for d in snapshot["software"]["torch"]["devices"] if d["pci_bus_id"] in present]
    snapshot["software"]["torch"]["devices"] = torch
    buses = [d["pci_bus_id"] for d in torch]
    pairs = {(a, b): dict(machine["pair"]) for a, b in combinations(buses, 2)}
    node = SimulatedNode(machine["gpus"], pairs, lib_version=machine["lib_version"])
    module = import_amdsmi(node)
    pci = {d["pci"]["bus_id"]: d["pci"] for d in base["devices"]}
    _healthy_aer(folder, buses)
    with (
        mock.patch.object(amd_devices, "_pci", lambda bus: pci[bus]),  # the host has no such /sys
        mock.patch.object(counters, "SYSFS_PCI", folder),
    ):
        devices, other = amd_devices.probe_amd(torch, load=lambda: module)
    snapshot["devices"] = devices
    snapshot["topology"]["pairs"] = other["topology"]["pairs"]
    snapshot["software"]["rocm"]["amdsmi_lib"] = other["rocm"]["amdsmi_lib"]
    return snapshot


def _healthy_aer(sysfs: Path, buses: list[str]) -> None:
    """Each GPU's aer_dev_* files in sysfs as the kernel writes them, counting no error."""
    for bus in buses:
        (sysfs / bus).mkdir(parents=True, exist_ok=True)
        for name, total in zip(counters.AER_FILES.values(), counters.AER_TOTALS, strict=True):
            (sysfs / bus / name).write_text(f"{total} 0\n")


def _xgmi_down(node, gpu: dict, sig: dict, rng: random.Random) -> bool:
    status = gpu["xgmi_links"]["status"]
    if len(node.machine["gpus"]) == 1:
        return False  # one GPU: its links lead to no peer, and are not judged
    for i in rng.sample(range(len(status)), rng.randint(1, min(3, len(status)))):
        status[i] = "AMDSMI_XGMI_LINK_DOWN"
    return True


def _amd_ecc(node, gpu: dict, sig: dict, rng: random.Random) -> bool:
    """Uncorrectable errors in one RAS block, and in the device total that sums the blocks."""
    block = rng.choice(sig["blocks"])
    if block not in gpu["ecc_blocks"]:
        return False
    n = rng.randint(1, 8)
    gpu["ecc_blocks"][block]["uncorrectable_count"] += n
    gpu["ecc_total"]["uncorrectable_count"] += n
    return True


def _bad_pages(node, gpu: dict, sig: dict, rng: random.Random) -> bool:
    if gpu.get("bad_pages") is None:
        return False  # NOT_SUPPORTED (an SR-IOV guest): the host retires pages
    start = len(gpu["bad_pages"])
    gpu["bad_pages"] += [
        {
            "page_address": 0x1000 * (start + n + 1),
            "page_size": 4096,
            "status": PAGE + sig["status"],
        }
        for n in range(rng.randint(1, 4))
    ]
    return True


def _hot_at_idle(node, gpu: dict, sig: dict, rng: random.Random) -> bool:
    hotspot = gpu["temperature"]["HOTSPOT"]
    hotspot["CURRENT"] = hotspot["CRITICAL"] - rng.randint(0, sig["within_c"])
    return True


def _amd_pcie_width(node, gpu: dict, sig: dict, rng: random.Random) -> bool:
    gpu["pcie"]["pcie_metric"]["pcie_width"] = sig["width"]
    gpu["pcie_link_status"]["pcie_lanes"] = sig["width"]
    return True


def _amd_drop_gpu(node, gpu: dict, sig: dict, rng: random.Random) -> bool:
    if len(node.machine["gpus"]) == 1:
        return False
    node.machine["gpus"].remove(gpu)
    return True


def _violation(node, gpu: dict, sig: dict, rng: random.Random) -> bool:
    """One limit of the signature's kinds active now, in violation for a share of recent time
    (amdsmi_violation_status_t's active_ and per_ fields, as libamd_smi fills them)."""
    field = VIOLATION_FIELDS[rng.choice(sig["kinds"])]
    gpu["violation"][f"active_{field}"] = 1
    gpu["violation"][f"per_{field}"] = rng.randint(1, 100)
    return True


INJECT = {
    "amd_drop_gpu": _amd_drop_gpu,
    "xgmi_down": _xgmi_down,
    "amd_ecc": _amd_ecc,
    "bad_pages": _bad_pages,
    "hot_at_idle": _hot_at_idle,
    "amd_pcie_width": _amd_pcie_width,
    "amd_violation": _violation,
}
