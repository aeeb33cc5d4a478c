"""Facts: what the machine is, read once per session by probes that cannot crash it."""

from rigcheck.facts.collect import collect_facts
from rigcheck.facts.snapshot import SCHEMA_VERSION, Facts, load_facts

__all__ = ["SCHEMA_VERSION", "Facts", "collect_facts", "load_facts"]
