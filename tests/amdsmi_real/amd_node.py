"""An 8-GPU MI300X node probed through a real amdsmi release over the simulated libamd_smi."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from amd_real import real_amdsmi
from counter_fakes import write_aer

from rigcheck.facts import amd, counters
from rigcheck.facts.synthetic import synthetic_snapshot
from rigcheck.spec import load_spec


def healthy_node() -> dict[str, Any]:
    return synthetic_snapshot(load_spec("mi300x"), gpus=8)


def probe(node: dict[str, Any], release: Path | None, monkeypatch, tmp_path: Path, **kw):
    """(devices, {"rocm", "topology"}) as rigcheck's AMD probe writes them on this node."""
    pci = {d["pci"]["bus_id"]: d["pci"] for d in node["devices"]}
    monkeypatch.setattr(amd, "_pci", lambda bus_id: pci[bus_id])  # this host has no such sysfs
    monkeypatch.setattr(counters, "SYSFS_PCI", tmp_path / "aer")
    for device in node["devices"]:
        write_aer(tmp_path / "aer", device)
    module = kw.pop("module", None) or real_amdsmi(node["devices"], node["topology"], path=release)
    return amd.probe_amd(node["software"]["torch"]["devices"], load=lambda: module)
