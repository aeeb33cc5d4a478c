"""Error counters of each RDMA port, from sysfs, and a sample of all ports to diff over a run.

/sys/class/infiniband/<dev>/ports/<n>/counters/ holds the InfiniBand PortCounters (IBTA spec,
PerfMgt PortCounters attribute) the kernel's ib_core reads from the port's PMA; the driver's
own counters (mlx5: out_of_buffer, packet_seq_err, ...) sit in hw_counters/ where the driver has
them. A NIC without a PMA (iWARP, some RoCE VFs) writes "N/A (no PMA)" in each file
(prometheus/node_exporter#966 shows one): that is an error record, never a zero.

The IBTA counters are small and stick at their maximum instead of wrapping (link_downed and
link_error_recovery are 8 bits, symbol_error 16 bits); a stuck counter is "at least", and the
checks say so.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rigcheck.facts.probe import error_record, guarded

ROOT = Path("/")
# The error counters judged (the ones gcm's check_ib_counters and Azure's Moneo read), and the
# largest value each holds before it sticks (IBTA PortCounters field widths).
ERROR_COUNTERS = {
    "symbol_error": 0xFFFF,
    "link_error_recovery": 0xFF,
    "link_downed": 0xFF,
    "port_rcv_errors": 0xFFFF,
    "port_rcv_remote_physical_errors": 0xFFFF,
    "port_rcv_switch_relay_errors": 0xFFFF,
    "port_xmit_discards": 0xFFFF,
    "port_xmit_constraint_errors": 0xFF,
    "port_rcv_constraint_errors": 0xFF,
    "local_link_integrity_errors": 0xF,
    "excessive_buffer_overrun_errors": 0xF,
    "VL15_dropped": 0xFFFF,
}
# A link that went down or retrained: any increase of these during a run fails.
FLAP_COUNTERS = ("link_downed", "link_error_recovery")


def read_counter(path: Path) -> Any:
    """One counter file: an int, or an error record ("N/A (no PMA)", unreadable)."""
    text = path.read_text().strip()
    try:
        return int(text)
    except ValueError:
        return error_record(f"{path} reads {text!r}, not a count")


def port_counters(port: Path) -> dict[str, Any]:
    """{"counters": {...}, "hw_counters": {...} or None} of one port directory."""
    counters = {
        name: guarded(lambda name=name: read_counter(port / "counters" / name))
        for name in ERROR_COUNTERS
        if (port / "counters" / name).exists()
    }
    if not counters:
        return error_record(f"{port / 'counters'} has none of the IB error counters")
    hw = port / "hw_counters"
    hw_counters = (
        {p.name: guarded(lambda p=p: read_counter(p)) for p in sorted(hw.iterdir())}
        if hw.is_dir()
        else None
    )
    return {"counters": counters, "hw_counters": hw_counters}


def sample_ports(root: Path = ROOT) -> dict[str, Any]:
    """Every RDMA port's counters now, keyed "mlx5_0/1", with the time; never raises."""
    return guarded(lambda: _sample(root))


def _sample(root: Path) -> dict[str, Any]:
    classdir = root / "sys/class/infiniband"
    ports: dict[str, Any] = {}
    for device in sorted(classdir.iterdir()) if classdir.is_dir() else []:
        for port in sorted((device / "ports").iterdir(), key=lambda p: int(p.name)):
            ports[f"{device.name}/{port.name}"] = guarded(lambda port=port: port_counters(port))
    return {"t": time.time(), "ports": ports}
