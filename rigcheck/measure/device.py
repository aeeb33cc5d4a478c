"""Which devices a session measures, named as the facts name them, and their torch device.

The facts list NVIDIA devices in NVML's order; torch numbers them in CUDA's order (fastest
first unless CUDA_DEVICE_ORDER=PCI_BUS_ID) and sees only CUDA_VISIBLE_DEVICES. A device is
matched to torch by its PCI bus id, so "GPU 3" in a message is the GPU nvidia-smi calls 3.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rigcheck.facts import Facts
from rigcheck.measure.numa import gpu_numa_cpus
from rigcheck.require import gpu_label


class DeviceNotVisible(Exception):
    """A device the facts list cannot be reached through torch."""


@dataclass(frozen=True)
class MeasuredDevice:
    """One device to measure: the host CPU, the Apple GPU, or one CUDA/ROCm GPU."""

    ident: str  # "0", "1", ... (the facts index), "cpu" or "mps": the id in replay files
    label: str  # how messages name it
    backend: str  # cuda, rocm, mps or cpu
    index: int | None = None  # the facts (NVML) index of a GPU
    bus_id: str | None = None
    fact: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    numa_node: int | None = None  # the GPU's NUMA node, from the topology facts
    host_cpus: str | None = None  # that node's CPUs (cpulist): where its host buffers go

    @property
    def param_id(self) -> str:
        """The test id: gpu0, gpu1, ... or cpu / mps."""
        return f"gpu{self.ident}" if self.index is not None else self.ident


def measured_devices(facts: Facts, backend: str) -> list[MeasuredDevice]:
    """The devices a class's perf checks run on; empty when an accelerator class finds none."""
    if backend == "cpu":
        return [MeasuredDevice("cpu", "cpu", "cpu")]
    if backend == "mps":
        return [MeasuredDevice("mps", "Apple GPU (mps)", "mps", fact=d) for d in facts.devices[:1]]
    return [
        MeasuredDevice(
            ident=str(d.get("index")),
            label=gpu_label(d),
            backend=backend,
            index=d.get("index"),
            bus_id=(d.get("pci") or {}).get("bus_id") if isinstance(d.get("pci"), dict) else None,
            fact=d,
            **dict(zip(("numa_node", "host_cpus"), gpu_numa_cpus(facts, d), strict=True)),
        )
        for d in facts.devices
    ]


def torch_device(device: MeasuredDevice):
    """The torch.device that is this device; DeviceNotVisible says why when there is none."""
    import torch

    if device.backend in ("cpu", "mps"):
        return torch.device(device.backend)
    if not torch.cuda.is_available():
        raise DeviceNotVisible(f"{device.label}: torch.cuda.is_available() is False")
    count = torch.cuda.device_count()
    buses = [_torch_bus_id(torch.cuda.get_device_properties(i)) for i in range(count)]
    if device.bus_id and any(buses):
        for i, bus in enumerate(buses):
            if bus and bus.lower() == device.bus_id.lower():
                return torch.device("cuda", i)
        raise DeviceNotVisible(
            f"{device.label} is not among the {count} device(s) torch sees ({', '.join(buses)}): "
            "check CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES"
        )
    if device.index is None or device.index >= count:
        raise DeviceNotVisible(f"{device.label}: torch sees {count} device(s)")
    return torch.device("cuda", device.index)


def _torch_bus_id(props) -> str | None:
    if not hasattr(props, "pci_bus_id"):
        return None
    return f"{props.pci_domain_id:04x}:{props.pci_bus_id:02x}:{props.pci_device_id:02x}.0"
