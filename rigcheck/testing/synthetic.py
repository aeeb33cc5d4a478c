"""Synthetic facts snapshots: what a healthy, idle machine of a class reports, without the machine.

CI has no GPU, so every device class's fact checks are replayed on snapshots written here from
the class's spec and a small table of what real boards report (NVML names, PCI ids, memory as
NVML counts it: vendors' datasheets, DCGM's SKU table, the spec sources). Each snapshot has exactly
the shape the probes write (facts/nvidia/, facts/host/torch_probe.py, facts/amd/, facts/apple/,
facts/host/system.py): same keys, types and units. Identity facts (name, PCI id, memory, compute
capability) come from the table, not the spec, so a spec that disagrees with real hardware fails its
own good snapshot.

    python -m rigcheck.testing.synthetic --write fixtures/snapshots    # one file per class
    python -m rigcheck.testing.synthetic h100 --gpus 8                 # one snapshot on stdout
"""

from __future__ import annotations

import argparse
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import rigcheck
from rigcheck.facts.nvidia.nvml import NVLINK_VERSIONS, nvlink_version
from rigcheck.facts.probe import error_record
from rigcheck.facts.snapshot import SCHEMA_VERSION, Facts
from rigcheck.spec import Spec, known_classes, load_spec
from rigcheck.testing.synthetic_amd import amd_health, rocm_host
from rigcheck.testing.synthetic_health import (
    acs_for,
    clock_event_time,
    device_counters,
    host_limits_for,
    iommu_devices_for,
    kernel_log,
    recovery_action,
    sized_for_gpus,
    smoke_mps,
)
from rigcheck.testing.synthetic_tables import (
    APPLE_CHIPS,
    BOARDS,
    HOSTS,
    IDLE_USED_MIB,
    STACKS,
    TORCH_RESERVED_MIB,
    AppleChip,
    Board,
    Host,
    Stack,
    bus_id,
    cpu_capability,
)
from rigcheck.testing.synthetic_topology import amd_topology, nvidia_topology, socket_of

MIB = 2**20
GIB = 2**30
COMMAND = "python -m rigcheck.testing.synthetic --write fixtures/snapshots"
NOTE = (
    "synthetic: written from reference figures (vendors' datasheets, DCGM's SKU table, the "
    "spec's sources) by rigcheck/testing/synthetic.py, not read from a machine"
)
NO_NVML = "NVML unavailable (NVMLError_LibraryNotFound: NVML Shared Library Not Found)"


def synthetic_snapshot(spec: Spec, gpus: int | None = None) -> dict[str, Any]:
    """A good facts snapshot of a machine of this class, with `gpus` devices (default: spec's)."""
    topology: dict[str, Any] = error_record(NO_NVML)  # what the probe says without NVML
    if spec.backend == "cpu":
        devices, software, smoke = [], _cpu_software(), _smoke_cpu()
        host = _linux_host("cpu")
    elif spec.backend == "mps":
        chip = APPLE_CHIPS[_table_key(spec, APPLE_CHIPS)]
        devices, software, smoke = [_apple_device(chip)], _mps_software(), smoke_mps(_smoke_cpu())
        host = _mac_host(chip)
    else:
        board = BOARDS[_table_key(spec, BOARDS)]
        stack = _stack_for(spec, board)
        count = int(spec.expected_value("gpu_count")) if gpus is None else gpus
        devices = [_device(spec, board, i, count) for i in range(count)]
        software, smoke = _gpu_software(spec, board, stack, count), _smoke_gpu(spec, board, count)
        host = sized_for_gpus(_linux_host(board.host), count)
        if spec.vendor == "nvidia":
            topology = nvidia_topology(spec, board, count)
        elif spec.vendor == "amd":
            topology = amd_topology(spec, board, count)
    return {
        "schema_version": SCHEMA_VERSION,
        "origin": _origin(spec, gpus),
        "host": host,
        "software": software,
        "devices": devices,
        "smoke": smoke,
        "topology": topology,
        "kernel_log": kernel_log(host["os"]),
        "host_limits": {
            **host_limits_for(host),
            "iommu_devices": iommu_devices_for(host["os"], devices),
            "acs": acs_for(host, devices),
            **_imex(spec),
        },
    }


def _imex(spec: Spec) -> dict[str, Any]:
    """imex.probe_imex's record where the class expects an IMEX channel: channel0, as the driver
    creates it with NVreg_CreateImexChannel0=1; nothing for other classes."""
    imex = spec.data["expect"].get("imex_channel")  # optional in the schema
    if imex and imex["value"]:
        return {"imex": {"channel_dir": True, "channels": [0]}}
    return {}


def _table_key(spec: Spec, table: dict[str, Any]) -> str:
    if spec.name not in table:
        raise KeyError(
            f"no reference figures for class {spec.name!r} in rigcheck/testing/synthetic.py: "
            f"add a row for it (known: {', '.join(table)})"
        )
    return spec.name


def _stack_for(spec: Spec, board: Board) -> Stack:
    """The board's stack; its driver must meet the class minimum, or the table is out of date."""
    stack = STACKS[board.stack]
    minimum = spec.expected_value("min_driver") if spec.expect("min_driver") else None
    if minimum and _version(stack.driver) < _version(minimum):
        raise ValueError(
            f"{spec.name}: the synthetic driver {stack.driver} is older than the class minimum "
            f"{minimum}: update STACKS[{board.stack!r}] in rigcheck/testing/synthetic.py"
        )
    return stack


def _version(text: str | None) -> tuple[int, ...]:
    return tuple(int(p) for p in (text or "0").split(".") if p.isdigit())


def _origin(spec: Spec, gpus: int | None) -> dict[str, Any]:
    command = f"python -m rigcheck.testing.synthetic {spec.name} --gpus {gpus}" if gpus else COMMAND
    return {
        "kind": "synthetic",
        "command": command,
        "rigcheck_version": rigcheck.__version__,
        "note": NOTE,
    }


def _linux_host(profile: str) -> dict[str, Any]:
    """facts/host/system.py's facts for a Linux server, workstation or VM of this profile."""
    h = HOSTS[profile]
    return {
        "os": "Linux",
        "os_release": "Ubuntu 22.04.5 LTS",
        "kernel": "5.15.0-126-generic",
        "machine": h.machine,
        "hostname": f"synthetic-{profile}",
        "python": "3.10.12",
        "python_executable": "/usr/bin/python3",
        "cpu": {
            "model": h.cpu,
            "arch": "X86_64" if h.machine == "x86_64" else "ARM_8",
            "cores_physical": h.cores[0],
            "cores_logical": h.cores[1],
            "max_mhz": h.max_mhz,
            "advertised_hz": round(h.advertised_ghz * 10**9),
            "simd_flags": sorted(h.simd_flags),
            "hypervisor_flag": h.virtualization != "none",
        },
        "memory_total_bytes": h.ram_gib * GIB,
        "memory_available_bytes": (h.ram_gib - 9) * GIB,
        "virtualization": h.virtualization,
    }


def _mac_host(chip: AppleChip) -> dict[str, Any]:
    """host/system.py on macOS: no /etc/os-release; py-cpuinfo finds no flags on Apple silicon."""
    return {
        "os": "Darwin",
        "os_release": "macOS-15.1.1-arm64-arm-64bit",
        "kernel": "24.1.0",
        "machine": "arm64",
        "hostname": "synthetic-mac",
        "python": "3.12.7",
        "python_executable": "/opt/homebrew/bin/python3",
        "cpu": {
            "model": chip.name,
            "arch": "ARM_8",
            "cores_physical": chip.cores,
            "cores_logical": chip.cores,
            "max_mhz": None,
            "advertised_hz": None,
            "simd_flags": ["asimd", "bf16", "i8mm", "sme"],  # M4: Armv9.2 with SME
            "hypervisor_flag": False,
        },
        "memory_total_bytes": chip.memory_gib * GIB,
        "memory_available_bytes": (chip.memory_gib - 6) * GIB,
        "virtualization": "none detected",
    }


def _device(spec: Spec, board: Board, index: int, count: int) -> dict[str, Any]:
    if spec.vendor == "amd":
        return {**_amd_device(board, index), **amd_health(spec, count)}
    return _nvidia_device(spec, board, index, count)


def _nvidia_device(spec: Spec, board: Board, index: int, count: int) -> dict[str, Any]:
    """nvml.probe_device's record of a healthy, idle device: health per the class's spec."""
    ecc = spec.expected_value("ecc")
    mig = spec.expected_value("mig")
    total = board.memory_mib * MIB
    return {
        "index": index,
        "vendor": "nvidia",
        "name": board.name,
        "pci": _nvidia_pci(board, index),
        "uuid": f"GPU-{uuid.uuid5(uuid.NAMESPACE_URL, f'rigcheck/{spec.name}/{index}')}",
        "serial": f"{1650000000001 + index}",
        "memory_total_bytes": total,
        "memory_free_bytes": total - IDLE_USED_MIB * MIB,
        "compute_capability": board.compute_capability,
        # NVML answers NotSupported (stored as None) for what a board does not have.
        "ecc": {"current": True, "pending": True} if ecc else None,
        "ecc_errors": _ecc_errors() if ecc else None,
        "retired_pages": _retired_pages() if ecc and not _is_ampere_or_newer(board) else None,
        "remapped_rows": _remapped_rows() if ecc and _is_ampere_or_newer(board) else None,
        "clocks": _clocks(board),
        "throttle_reasons": ["gpu_idle"],
        "temperature_c": 31,
        "power": _power(spec),
        "pcie": _pcie(spec),
        "persistence_mode": bool(spec.expected_value("persistence_mode")),
        "mig": None if mig is None else {"current": mig, "pending": mig},
        "processes": [],
        "nvlink": _nvlink(spec),
        "numa_node": _numa_node(HOSTS[board.host], index, count),
        **device_counters(spec, board, HOSTS[board.host].virtualization != "none"),
        "recovery_action": recovery_action(STACKS[board.stack].driver),
        "clock_event_time_ns": clock_event_time(STACKS[board.stack].driver),
    }


def _numa_node(host: Host, index: int, count: int) -> int | None:
    """sysfs's node for the GPU's PCI device; a VM's firmware gives none (-1, stored as None)."""
    return socket_of(host, index, count) if host.virtualization == "none" else None


def _nvidia_pci(board: Board, index: int) -> dict[str, str]:
    return {
        "bus_id": bus_id(index),
        "device_id": board.pci_device_id,
        "vendor_id": "0x10DE",
        "subsystem_id": f"0x{board.pci_device_id[2:]}10DE",  # NVIDIA's own board
    }


def _is_ampere_or_newer(board: Board) -> bool:
    """Ampere and later remap rows; earlier GPUs retire pages instead (nvml._retired_pages)."""
    return _version(board.compute_capability) >= (8, 0)


def _ecc_errors() -> dict[str, int]:
    return {
        "volatile_uncorrected": 0,
        "aggregate_uncorrected": 0,
        "volatile_corrected": 0,
        "aggregate_corrected": 0,
    }


def _retired_pages() -> dict[str, Any]:
    return {"pending": False, "double_bit": 0, "single_bit": 0}


def _remapped_rows() -> dict[str, Any]:
    return {"correctable": 0, "uncorrectable": 0, "pending": False, "failure": False}


def _clocks(board: Board) -> dict[str, int]:
    return {
        "sm_mhz": 345,  # idle
        "mem_mhz": board.mem_max_mhz,
        "sm_max_mhz": board.sm_max_mhz,
        "mem_max_mhz": board.mem_max_mhz,
    }


def _power(spec: Spec) -> dict[str, float]:
    """In W, as nvml._power converts NVML's milliwatts; the limit is the class's TDP."""
    tdp = float(spec.expected_value("tdp"))
    return {
        "limit_w": tdp,
        "default_limit_w": tdp,
        "max_limit_w": tdp,
        "draw_w": round(tdp / 10 + 0.123, 3),
    }


def _pcie(spec: Spec) -> dict[str, int]:
    link = spec.expect("pcie")
    return {
        "gen_current": link["generation"],
        "gen_max": link["generation"],
        "gen_device_max": link["generation"],
        "width_current": link["width"],
        "width_max": link["width"],
    }


def _nvlink(spec: Spec) -> list[dict[str, Any]]:
    """Every link up where the class has NVLink; none listed where it has none."""
    link = spec.expect("gpu_link")
    if link["type"] != "nvlink":
        return []
    major = link.get("version")
    code = {v: k for k, v in NVLINK_VERSIONS.items()}.get(f"{major}.0")  # as NVML answers it
    return [
        {"link": i, "active": True, "version": nvlink_version(code), "nvml_code": code}
        for i in range(link["links_per_device"])
    ]


def _amd_device(board: Board, index: int) -> dict[str, Any]:
    """amd.amd_devices's record: the torch device plus PCI ids from sysfs."""
    return {
        "index": index,
        "vendor": "amd",
        "name": board.name,
        "gcn_arch": board.gcn_arch,
        "compute_capability": board.compute_capability,
        "memory_total_bytes": board.memory_mib * MIB,
        "pci": {"bus_id": bus_id(index), "device_id": board.pci_device_id, "vendor_id": "0x1002"},
    }


def _apple_device(chip: AppleChip) -> dict[str, Any]:
    """apple.probe_apple_device's record of the GPU sharing the host's memory."""
    return {
        "index": 0,
        "vendor": "apple",
        "name": chip.name,
        "model": chip.model,
        "macos": "15.1.1",
        "memory_total_bytes": chip.memory_gib * GIB,
        "unified_memory": True,
        "mps_available": True,
    }


def _gpu_software(spec: Spec, board: Board, stack: Stack, count: int) -> dict[str, Any]:
    nvidia = stack.build == "cuda"
    return {
        "torch": _torch(
            stack, [_torch_device(board, i) for i in range(count)], board, HOSTS[board.host]
        ),
        "flash_attn": _flash_attn(spec, stack),
        "nvidia_driver": _driver(stack) if nvidia else {"present": False, "reason": NO_NVML},
        "nvcc": {"path": "/usr/local/cuda/bin/nvcc", "version": stack.cuda} if nvidia else None,
        "rocm": rocm_host(stack.hip) if stack.build == "rocm" else None,
    }


def _mps_software() -> dict[str, Any]:
    torch = _torch(STACKS["macos"], [], None, None)
    torch.update(mps_built=True, mps_available=True)
    return {
        "torch": torch,
        "flash_attn": {"installed": False},
        "nvidia_driver": {"present": False, "reason": NO_NVML},
        "nvcc": None,
        "rocm": None,
    }


def _cpu_software() -> dict[str, Any]:
    return {
        "torch": _torch(STACKS["cpu"], [], None, HOSTS["cpu"]),
        "flash_attn": {"installed": False},
        "nvidia_driver": {"present": False, "reason": NO_NVML},
        "nvcc": None,
        "rocm": None,
    }


def _driver(stack: Stack) -> dict[str, Any]:
    return {"present": True, "version": stack.driver, "cuda_driver_version": stack.driver_cuda}


def _torch(
    stack: Stack, devices: list[dict[str, Any]], board: Board | None, host: Host | None
) -> dict[str, Any]:
    """torch_probe.probe_torch's record; device facts only where torch sees a GPU."""
    gpu = bool(devices)
    return {
        "version": stack.torch,
        "build": stack.build,
        "cuda_version": stack.cuda,
        "hip_version": stack.hip,
        "cudnn_version": stack.cudnn,
        "nccl_version": stack.nccl if gpu else None,
        "cuda_available": gpu,
        "device_count": len(devices),
        "arch_list": list(stack.arch_list),
        "bf16_supported": _bf16_supported(board) if gpu else None,
        "tf32_matmul_allowed": False,
        "tf32_cudnn_allowed": True,
        "float32_matmul_precision": "highest",
        "mps_built": False,
        "cpu_capability": cpu_capability(host),
        # Unset: a healthy host leaves oneDNN its full ISA (ONEDNN_MAX_CPU_ISA caps it).
        "onednn_max_cpu_isa": None,
        "mps_available": False,
        "devices": devices,
    }


def _bf16_supported(board: Board) -> dict[str, bool]:
    """torch says True with emulation on any GPU; natively only from compute capability 8.0."""
    return {"with_emulation": True, "native": _is_ampere_or_newer(board)}


def _torch_device(board: Board, index: int) -> dict[str, Any]:
    amd = board.gcn_arch is not None
    reserved = 0 if amd else TORCH_RESERVED_MIB
    return {
        "index": index,
        "name": board.name,
        "compute_capability": board.compute_capability,
        "total_memory_bytes": (board.memory_mib - reserved) * MIB,
        "gcn_arch": board.gcn_arch,
        "pci_bus_id": bus_id(index),
        "multi_processor_count": board.sm_count,
    }


def _flash_attn(spec: Spec, stack: Stack) -> dict[str, Any]:
    if not spec.expected_value("flash_attn"):
        return {"installed": False}
    return {"installed": True, "version": stack.flash_attn, "import_error": None}


def _smoke_cpu() -> dict[str, Any]:
    return {"cpu_bf16_matmul": {"ran": True, "max_rel_err": 0.0024, "ok": True}}


def _smoke_gpu(spec: Spec, board: Board, count: int) -> dict[str, Any]:
    """The probe's tiny kernels: bf16 everywhere, fp8 from CC 8.9, flash-attn where it imports."""
    fp8 = _version(board.compute_capability) >= (8, 9)
    smoke = _smoke_cpu()
    smoke["bf16_matmul"] = [{"ran": True, "max_rel_err": 0.0031, "ok": True} for _ in range(count)]
    smoke["fp8_matmul"] = [
        {"ran": True, "max_rel_err": 0.0052, "ok": True} if fp8 else None for _ in range(count)
    ]
    if spec.expected_value("flash_attn"):
        smoke["flash_attn_forward"] = {"ran": True, "max_abs_err": 0.00049, "ok": True}
    return smoke


def write_snapshots(directory: Path, classes: Sequence[str]) -> list[Path]:
    """One <class>.json per class, formatted as `rigcheck facts -o` writes them."""
    written = []
    for name in classes:
        path = directory / f"{name}.json"
        Facts(synthetic_snapshot(load_spec(name))).save(path)
        written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m rigcheck.testing.synthetic", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("classes", nargs="*", help="device classes (default: every spec file)")
    parser.add_argument("--write", metavar="DIR", help="write DIR/<class>.json for each class")
    parser.add_argument("--gpus", type=int, metavar="N", help="devices in the snapshot")
    args = parser.parse_args(argv)
    classes = args.classes or known_classes()
    if args.write:
        if args.gpus is not None:
            parser.error("--write writes each class with its spec's GPU count; drop --gpus")
        for path in write_snapshots(Path(args.write), classes):
            print(f"wrote {path}", file=sys.stderr)
        return 0
    if len(classes) != 1:
        parser.error("name one class to print, or use --write DIR")
    sys.stdout.write(Facts(synthetic_snapshot(load_spec(classes[0]), args.gpus)).to_json())
    return 0


if __name__ == "__main__":
    sys.exit(main())
