"""A randomised node of a class: a real capture's profile with benign variation drawn from the
same capture's GPUs and real benign log lines, then one fault signature injected below rigcheck's
probes (the NVML profile pynvml reads, libamd_smi's answers amdsmi reads, the lines the
kernel-log reader parses). A cpu node is the project's recorded CI machine, replayed."""

from __future__ import annotations

import copy
import json
import random
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from rigcheck.layout import ROOT_DIR
from rigcheck.spec import load_spec
from rigcheck.testing.coverage import acceptance, amd, corpus, fabric
from rigcheck.testing.nvml_sim import machine_profile
from rigcheck.testing.synthetic import synthetic_snapshot

# Each class's family and what its nodes start from: a real nvidia-smi capture's profile
# (rigcheck/testing/nvml_sim/profiles/machines), the MI300X platform profile of public amd-smi
# outputs (rigcheck/testing/amdsmi_sim/profiles), or a snapshot recorded on a real machine.
PROFILES = {
    "h100": ("nvidia", "h100_hgx"),
    "a100_40gb": ("nvidia", "a100_sxm"),
    "b200": ("nvidia", "b200_hgx"),
    "mi300x": ("amd", "mi300x_8gpu"),
    "cpu": ("host", "fixtures/snapshots/cpu-ci.json"),
}
# The kernel-log driver whose real lines a family's nodes get (fixtures/realworld/kernel_log.json).
DRIVER = {"nvidia": "nvidia", "amd": "amdgpu"}
# Operator settings a capture's machine had otherwise than its class requires, set as the class
# wants them: NVIDIA's B200 capture ran with persistence mode off, which the b200 class fails
# (suites/facts/test_health.py::test_persistence_mode); the campaign asks about faults.
SETTINGS = {"b200": {"persistence_mode": 1}}
# Per-GPU readings a healthy node varies in; each GPU draws its own from the capture's GPUs.
VARYING = ("temperature_c", "clocks", "memory", "power.draw_mw", "pcie.replays")
BENIGN_LOG_CHANCE = 0.3  # a node whose log holds an application Xid or two (real lines)


@dataclass
class Node:
    cls: str
    family: str  # "nvidia", "amd" or "host" (PROFILES)
    machine: dict[str, Any]  # the simulated library's answers; for "host", the recorded facts
    log_lines: list[str] = field(default_factory=list)
    injected: list[str] = field(default_factory=list)  # signature names
    # device ("0".., "cpu") -> [(figure prefix, factor)]: kernels a fault slows under load
    slow: dict[str, list[tuple[str, float]]] = field(default_factory=dict)
    # the acceptance tier's burn-in faults, written into the node's trace once its facts are read
    trace_faults: list[dict[str, Any]] = field(default_factory=list)
    fabric: fabric.Fabric | None = None  # its RDMA NICs (coverage/fabric.py); None: no fabric


def healthy_node(cls: str, rng: random.Random) -> Node:
    """A healthy node of the class, varied as real healthy nodes of its board are."""
    family, source = PROFILES[cls]
    if family == "host":
        return Node(cls, family, json.loads((Path(ROOT_DIR) / source).read_text()))
    if family == "amd":
        machine = amd.amd_machine(source, amd_bus_ids(cls))
    else:
        machine = copy.deepcopy(machine_profile(source))
        _vary(cls, machine, rng)
    node = Node(cls, family, machine)
    if fabric.has_fabric(cls):
        node.fabric = fabric.healthy_fabric(cls, [bus_of(g) for g in machine["gpus"]], rng)
    if rng.random() < BENIGN_LOG_CHANCE:
        gpu = rng.choice(machine["gpus"])
        _log(node, rng.choice(corpus.benign_lines(DRIVER[family])), gpu)
    return node


def _vary(cls: str, machine: dict[str, Any], rng: random.Random) -> None:
    """Each GPU's varying readings drawn from one of the capture's GPUs."""
    pool = [copy.deepcopy(g) for g in machine["gpus"]]
    for gpu in machine["gpus"]:
        gpu.update(SETTINGS.get(cls, {}))
        donor = rng.choice(pool)
        for path in VARYING:
            _set(gpu, path, copy.deepcopy(_get(donor, path)))


def amd_bus_ids(cls: str) -> list[str]:
    """The bus ids of the class's synthetic node (its torch view and PCI records)."""
    return [d["pci_bus_id"] for d in amd_base(cls)["software"]["torch"]["devices"]]


@cache
def amd_base(cls: str) -> dict[str, Any]:
    """The class's synthetic 8-GPU snapshot: the host and torch view the AMD facts join."""
    return synthetic_snapshot(load_spec(cls), gpus=8)


def bus_of(gpu: dict[str, Any]) -> str:
    """A GPU's PCI bus id in the kernel's form (0000:53:00.0), from an NVML or amdsmi profile."""
    return gpu["bdf"] if "bdf" in gpu else gpu["pci"]["bus_id"][-12:]


def _log(node: Node, text: str, gpu: dict[str, Any]) -> None:
    node.log_lines.extend(corpus.retarget(text, bus_of(gpu)).splitlines())


def inject(node: Node, name: str, signature: dict[str, Any], rng: random.Random) -> bool:
    """Put one signature on a random GPU of the node; False where it cannot be (no real line of
    that event in the corpus, a board without the feature)."""
    if node.family == "host":
        return False  # the recorded machine is replayed as it was: nothing lies below its facts
    gpu = rng.choice(node.machine["gpus"])
    done = INJECT[signature["kind"]](node, gpu, signature, rng)
    if done:
        node.injected.append(name)
    return done


def _drop_gpu(node: Node, gpu: dict, sig: dict, rng: random.Random) -> bool:
    if len(node.machine["gpus"]) == 1:
        return False  # a node with no GPU left: not modelled (the simulator needs one GPU)
    node.machine["gpus"].remove(gpu)
    _drop_from_topology(node.machine, len(node.machine["gpus"]))
    return True


def _drop_from_topology(machine: dict[str, Any], count: int) -> None:
    paths = machine.get("topology", {}).get("pcie_paths")
    if paths:
        machine["topology"]["pcie_paths"] = [row[:count] for row in paths[:count]]


def _lose_gpu(node: Node, gpu: dict, sig: dict, rng: random.Random) -> bool:
    gpu["lost"] = True
    return True


def _nvlink_inactive(node: Node, gpu: dict, sig: dict, rng: random.Random) -> bool:
    links = (gpu.get("nvlink") or {}).get("links") or 0
    if not links or len(node.machine["gpus"]) == 1:
        return False  # a single GPU's links lead to no peer: NVLink is not judged there
    gpu["nvlink"]["inactive"] = sorted(rng.sample(range(links), rng.randint(1, min(4, links))))
    return True


def _ecc(node: Node, gpu: dict, sig: dict, rng: random.Random) -> bool:
    counts = gpu.get("ecc_errors")
    if not counts or sig["field"] not in counts:
        return False
    counts[sig["field"]] = rng.randint(1, 8)
    aggregate = sig["field"].replace("volatile", "aggregate")
    counts[aggregate] = max(counts.get(aggregate) or 0, counts[sig["field"]])
    return True


def _remap(node: Node, gpu: dict, sig: dict, rng: random.Random) -> bool:
    rows = gpu.get("remapped_rows")
    if not rows:
        return False
    rows[sig["field"]] = 1
    rows["uncorrectable"] = max(rows.get("uncorrectable") or 0, rng.randint(1, 4))
    return True


def _clock_event(node: Node, gpu: dict, sig: dict, rng: random.Random) -> bool:
    gpu["clock_event_reasons"] = (gpu.get("clock_event_reasons") or 0) | sig["bit"]
    return True


def _pcie_width(node: Node, gpu: dict, sig: dict, rng: random.Random) -> bool:
    gpu["pcie"]["width_current"] = gpu["pcie"]["width_max"] = sig["width"]
    return True


def _recovery_action(node: Node, gpu: dict, sig: dict, rng: random.Random) -> bool:
    # nvmlGpuRecoveryAction_t: 1 GPU reset, 2 node reboot, 3 drain P2P, 4 drain and reset
    gpu["recovery_action"] = rng.randint(1, 4)
    return True


def _kernel_line(node: Node, gpu: dict, sig: dict, rng: random.Random) -> bool:
    lines = corpus.lines_by_event(DRIVER[node.family])
    found = [hit for event in sig["events"] for hit in lines.get(event, [])]
    if not found:
        return False
    text, _, _ = rng.choice(found)
    _log(node, text, gpu)
    return True


def _nic_kernel_line(node: Node, gpu: dict, sig: dict, rng: random.Random) -> bool:
    """A real mlx5_core record naming the NIC on the GPU's PCIe switch (its fabric's address)."""
    if node.fabric is None:
        return False  # a node without RDMA NICs has no NIC to fault
    lines = corpus.lines_by_event("mlx5")
    found = [hit for event in sig["events"] for hit in lines.get(event, []) if hit[1]]
    if not found:
        return False  # no real line naming a PCI function: a sub-function's names none
    text, _, _ = rng.choice(found)
    slot = node.fabric.gpu_buses.index(bus_of(gpu).lower())
    nic = next((n for n in node.fabric.nics if n.slot == slot), node.fabric.nics[0])
    node.log_lines.extend(corpus.retarget(text, nic.bus_id).splitlines())
    return True


def _slowdown(node: Node, gpu: dict, sig: dict, rng: random.Random) -> bool:
    """A GPU whose kernels run `factor` times slower under load; idle, its facts are healthy."""
    device = str(node.machine["gpus"].index(gpu))
    node.slow.setdefault(device, []).append((sig["figures"], sig["factor"]))
    return True


def _trace_fault(node: Node, gpu: dict, sig: dict, rng: random.Random) -> bool:
    """A fault the burn-in's trace shows (coverage/acceptance.py writes it into the trace)."""
    node.trace_faults.append(sig)
    return True


INJECT = {
    **dict.fromkeys(acceptance.INJECT, _trace_fault),
    "drop_gpu": _drop_gpu,
    "lose_gpu": _lose_gpu,
    "nvlink_inactive": _nvlink_inactive,
    "ecc": _ecc,
    "remap": _remap,
    "clock_event": _clock_event,
    "pcie_width": _pcie_width,
    "kernel_line": _kernel_line,
    "nic_kernel_line": _nic_kernel_line,
    "recovery_action": _recovery_action,
    "slowdown": _slowdown,
    **amd.INJECT,
    **fabric.INJECT,
}


def _get(record: dict[str, Any], path: str) -> Any:
    for key in path.split("."):
        record = record[key]
    return record


def _set(record: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    for key in parents:
        record = record[key]
    record[last] = value
