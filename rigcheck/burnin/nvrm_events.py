"""NVRM fault records during the burn-in, read through the kernel-log probe
(rigcheck/facts/kernel_log/xid_events.py).

A GPU can fall off the bus, or fail to initialize after a reset, without any Xid: the open
driver (570 and later) logs "NVRM: The NVIDIA GPU 0000:b3:00.0 ... has fallen off the bus"
(rigcheck/facts/kernel_log/nvrm.py reads those records; the Slurm epilog already does). The burn-in
reads them for its window as it reads the Xid events (rigcheck/burnin/events.py):

`read_nvrm_events(start, end)` returns [{"t_s": seconds after start, "kind": "fallen_off_bus",
"device": "0000:b3:00.0" or None, "text": ...}], or {"error": why} when the log cannot be read,
so test_no_nvrm_fault_records fails closed rather than passing unread. Tests replace READER.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rigcheck.burnin.events import between


def _facts_reader() -> Callable[[float], list[dict[str, Any]]]:
    from rigcheck.facts.kernel_log.xid_events import nvrm_events

    return nvrm_events


READER: Callable[[], Callable[[float], list[dict[str, Any]]]] = _facts_reader


def read_nvrm_events(start: float, end: float) -> list[dict[str, Any]] | dict[str, str]:
    """NVRM records between two time.time() moments, relative to start; or an error record."""
    return between(lambda since: READER()(since), start, end, "NVRM records", "kind", str)
