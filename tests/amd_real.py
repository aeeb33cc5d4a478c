"""The real amdsmi package over a simulated libamd_smi (rigcheck/testing/amdsmi_sim), built from a
snapshot's AMD device records: what the AMD probe tests run against, in place of the
hand-written stand-in module this replaced. `module.failures[(C symbol, bus id or None)]` makes
that call answer an amdsmi_status_t code (2 NOT_SUPPORTED, 10 NO_PERM, 34 DRIVER_NOT_LOADED...)."""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from counter_fakes import write_aer

from rigcheck.facts.amd import devices as amd
from rigcheck.facts.nvidia import counters
from rigcheck.spec import load_spec
from rigcheck.testing.amdsmi_sim import import_amdsmi
from rigcheck.testing.amdsmi_sim.from_facts import device_profile, pairs_from_topology
from rigcheck.testing.amdsmi_sim.node import Node
from rigcheck.testing.synthetic import synthetic_snapshot

INVAL, NOT_SUPPORTED, NO_PERM, DRIVER_NOT_LOADED = 1, 2, 10, 34
# The library version the synthetic ROCm 6.2 host records (rigcheck/testing/synthetic_amd.py).
LIB_VERSION = {"major": 24, "minor": 6, "release": 2, "build": "0"}


def real_amdsmi(
    devices: list[dict[str, Any]],
    topology: Any = None,
    driver: str = "6.8.5",
    path: Path | None = None,
    rocm_path: str | None = "/opt/rocm",
) -> ModuleType:
    """The amdsmi package (the installed one, or the release in `path`) answering for `devices`."""
    profiles = [device_profile(d, driver) for d in devices]
    node = Node(profiles, pairs_from_topology(topology or {}), lib_version=LIB_VERSION)
    module = import_amdsmi(node, path=path, rocm_path=rocm_path)
    module.failures = node.fail  # type: ignore[attr-defined]
    module.simulated_node = node  # type: ignore[attr-defined]
    return module


# --- the amdsmi releases the tests run against ---------------------------------------------
# The installed package (tox: 7.0.2) and each older one .ci/amdsmi_releases.py installed under
# $RIGCHECK_AMDSMI_RELEASES (tox: 6.0.0 ... 6.4.4). On CI a missing one fails the run
# (tests/amdsmi_real/test_release_matrix.py); elsewhere the installed package alone runs.
RELEASES_ENV = "RIGCHECK_AMDSMI_RELEASES"


def older_releases() -> list[Path]:
    folder = os.environ.get(RELEASES_ENV)
    if not folder or not Path(folder).is_dir():
        return []
    return sorted(p for p in Path(folder).iterdir() if (p / "amdsmi").is_dir())


# For @pytest.mark.parametrize("release", RELEASES): a folder holding one release's amdsmi
# package, or None for the installed one.
RELEASES = [pytest.param(None, id="amdsmi-installed")] + [
    pytest.param(p, id=f"amdsmi-{p.name}") for p in older_releases()
]


# --- an 8-GPU MI300X node probed through a real amdsmi release -----------------------------
def healthy_node() -> dict[str, Any]:
    return synthetic_snapshot(load_spec("mi300x"), gpus=8)


def probe(node: dict[str, Any], release: Path | None, monkeypatch, tmp_path: Path, module=None):
    """(devices, {"rocm", "topology"}) as rigcheck's AMD probe writes them on this node."""
    pci = {d["pci"]["bus_id"]: d["pci"] for d in node["devices"]}
    monkeypatch.setattr(amd, "_pci", lambda bus_id: pci[bus_id])  # this host has no such sysfs
    monkeypatch.setattr(counters, "SYSFS_PCI", tmp_path / "aer")
    for device in node["devices"]:
        write_aer(tmp_path / "aer", device)  # the kernel's aer_dev_* files (tests/counter_fakes)
    module = module or real_amdsmi(node["devices"], node["topology"], path=release)
    return amd.probe_amd(node["software"]["torch"]["devices"], load=lambda: module)
