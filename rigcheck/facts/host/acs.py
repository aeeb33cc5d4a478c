"""PCIe Access Control Services on the switch ports above the GPUs and RDMA NICs.

ACS P2P Request/Completion Redirect and Egress Control on a PCIe switch's downstream port send
peer-to-peer traffic up to the root complex instead of across the switch: GPU-to-GPU copies and
GPUDirect RDMA slow down or hang. NCCL's troubleshooting guide says to disable ACS on bare metal.

The ACS control register lives in the PCIe extended capability list (config space from 0x100),
which Linux shows only to root: an unprivileged read of /sys/bus/pci/devices/<BDF>/config
returns the first 64 bytes (drivers/pci/pci-sysfs.c, pci_read_config), and `lspci -vvv` prints
no ACSCtl line either. Without root the probe says so, and how to read it by hand.

Only ports below the root port are read: traffic between GPUs under different root ports goes
through the root complex whatever ACS says, and Linux itself turns ACS on at root ports where
an IOMMU is present.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

from rigcheck.facts.fabric.nics import pci_place
from rigcheck.facts.probe import error_record, guarded, is_error

ROOT = Path("/")
EXTENDED_START = 0x100  # PCIe extended capabilities begin here (PCIe spec 7.6)
ACS_ID = 0x000D  # the ACS extended capability's id (PCIe spec 7.7.8)
# ACS Control register bits (PCIe spec 7.7.8.3), named as lspci's ACSCtl line names them;
# these three make a port send peer-to-peer traffic upstream or drop it.
REDIRECT_BITS = {0x4: "ReqRedir", 0x8: "CmpltRedir", 0x20: "EgressCtrl"}
UNPRIVILEGED_BYTES = 64  # what Linux returns to a reader without CAP_SYS_ADMIN


def probe_acs(devices: Any, root: Path = ROOT) -> Any:
    """{"ports": [...]}, one entry per switch port above a GPU or RDMA NIC; never raises."""
    return guarded(lambda: _acs(devices, root))


def _acs(devices: Any, root: Path) -> dict[str, Any]:
    below: dict[str, list[str]] = {}
    for name, bus_id in _endpoints(devices, root):
        place = pci_place(root / "sys/bus/pci/devices" / bus_id)
        for port in place["bridges"][1:]:  # the root port itself is not judged
            below.setdefault(port, []).append(name)
    ports = []
    for port, names in sorted(below.items()):
        control = read_acs_control(root / "sys/bus/pci/devices" / port / "config")
        if is_error(control):
            return control  # one reason for all: root is needed, or /sys is missing
        redirect = [] if control is None else [n for b, n in REDIRECT_BITS.items() if control & b]
        ports.append({"bus_id": port, "devices": names, "control": control, "redirect": redirect})
    return {"ports": ports}


def _endpoints(devices: Any, root: Path) -> list[tuple[str, str]]:
    """(name, PCI bus id) of every GPU and RDMA NIC."""
    found = []
    for device in devices if isinstance(devices, list) else []:
        pci = device.get("pci") if isinstance(device, dict) else None
        bus_id = pci.get("bus_id") if isinstance(pci, dict) else None
        if isinstance(bus_id, str):
            found.append((f"GPU {device.get('index')}", bus_id.lower()))
    nics = root / "sys/class/infiniband"
    for nic in sorted(nics.iterdir()) if nics.is_dir() else []:
        bus_id = guarded(lambda nic=nic: (nic / "device").resolve(strict=True).name)
        if isinstance(bus_id, str):
            found.append((nic.name, bus_id))
    return found


def read_acs_control(config: Path) -> Any:
    """The port's ACS Control register; None when it has no ACS capability; an error record
    when the extended config space cannot be read (not root)."""
    data = config.read_bytes()
    if len(data) <= UNPRIVILEGED_BYTES:
        return error_record(
            f"{config} gave {len(data)} bytes: the ACS registers are in PCIe extended config "
            "space, which Linux shows only to root. Run `rigcheck facts` as root (sudo), or "
            "read them by hand: `sudo lspci -vvv | grep ACSCtl` (ReqRedir+ or CmpltRedir+ on a "
            "switch port above a GPU is the fault)"
        )
    return acs_control(data)


def acs_control(config: bytes) -> int | None:
    """Walk the extended capability list for ACS; None where the port has none."""
    offset, seen = EXTENDED_START, set()
    while EXTENDED_START <= offset <= len(config) - 8 and offset not in seen:
        seen.add(offset)
        header = struct.unpack_from("<I", config, offset)[0]
        if header in (0, 0xFFFFFFFF):  # no extended capabilities (conventional PCI), or gone
            return None
        if header & 0xFFFF == ACS_ID:
            return struct.unpack_from("<H", config, offset + 6)[0]
        offset = (header >> 20) & 0xFFC
    return None
