"""Facts: what the machine is, read once per session by probes that cannot crash it.

The names below load on first use (PEP 562): the torch probe's child process is started as
`python -m rigcheck.facts.host.torch_probe`, which imports this package first, and must not pay
for the collector, the snapshot schema and jsonschema that it never uses.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rigcheck.facts.collect import collect_facts
    from rigcheck.facts.snapshot import SCHEMA_VERSION, Facts, load_facts

__all__ = ["SCHEMA_VERSION", "Facts", "collect_facts", "load_facts"]
_HOMES = {
    "collect_facts": "rigcheck.facts.collect",
    "SCHEMA_VERSION": "rigcheck.facts.snapshot",
    "Facts": "rigcheck.facts.snapshot",
    "load_facts": "rigcheck.facts.snapshot",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name]), name)
    globals()[name] = value  # later lookups find it without this hook
    return value
