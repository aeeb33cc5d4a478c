"""Collect the live machine's facts snapshot: every probe once, none able to crash the run."""

from __future__ import annotations

import datetime as dt
import shlex
import sys
import time
from typing import Any

import rigcheck
from rigcheck.facts.amd.devices import probe_amd
from rigcheck.facts.apple.sysctl import is_apple_silicon, probe_apple_device
from rigcheck.facts.fabric.nics import probe_fabric
from rigcheck.facts.host.acs import probe_acs
from rigcheck.facts.host.iommu_devices import probe_iommu_devices
from rigcheck.facts.host.limits import probe_host_limits
from rigcheck.facts.host.system import probe_host
from rigcheck.facts.host.torch_process import TorchProbe
from rigcheck.facts.host.uptime import probe_uptime
from rigcheck.facts.kernel_log.reader import probe_kernel_log, window_from_env
from rigcheck.facts.nvidia.imex import probe_imex
from rigcheck.facts.nvidia.nvcc import probe_nvcc
from rigcheck.facts.nvidia.nvml import probe_nvidia
from rigcheck.facts.nvidia.topology import probe_topology
from rigcheck.facts.probe import CommandRunner, error_record, is_error
from rigcheck.facts.snapshot import SCHEMA_VERSION, Facts


def collect_facts(
    run: CommandRunner | None = None,
    xid_window_s: int | None = None,
    torch_probe: TorchProbe | None = None,
) -> Facts:
    """xid_window_s: only Xid events this recent (default: RIGCHECK_XID_WINDOW, else since boot).

    torch_probe: one the caller started already (tests pass a stand-in); else started here.
    Its child imports torch while NVML is read, and touches no GPU until NVML is done.
    """
    run = run or CommandRunner()
    started = time.monotonic()
    torch_probe = torch_probe or TorchProbe()
    driver, nvidia = probe_nvidia()  # before any CUDA context of ours: idle clocks, no stray pid
    torch_probe.release()
    data = {
        "schema_version": SCHEMA_VERSION,
        "origin": _origin(),
        "host": probe_host(run),
        "software": {"nvidia_driver": driver, "nvcc": probe_nvcc(run)},
        "kernel_log": window_from_env(lambda w: probe_kernel_log(run, w), xid_window_s),
        "host_limits": probe_host_limits(),
        "uptime": probe_uptime(),  # the interval the PCIe replay counters grew over
    }
    torch_side = torch_probe.result()
    torch_facts = torch_side.get("torch", {})
    devices, amd = (nvidia, {}) if nvidia else _other_devices(run, torch_facts)
    data["software"] = {
        "torch": torch_facts,
        "flash_attn": _from_torch_side(torch_side, "flash_attn"),
        **data["software"],
        "rocm": amd.get("rocm"),  # None off ROCm (rigcheck/facts/amd/rocm.py)
    }
    data["devices"] = devices
    data["smoke"] = _from_torch_side(torch_side, "smoke")
    data["topology"] = amd["topology"] if "topology" in amd else probe_topology()
    data["fabric"] = probe_fabric(data["devices"])
    data["host_limits"]["iommu_devices"] = probe_iommu_devices(data["devices"])
    data["host_limits"]["acs"] = probe_acs(data["devices"])
    data["host_limits"]["imex"] = probe_imex()  # Grace-Blackwell trays' IMEX channels
    data["origin"]["collect_seconds"] = round(time.monotonic() - started, 2)
    return Facts(data)


def _from_torch_side(torch_side: dict[str, Any], key: str) -> Any:
    """A fact the torch probe reads; when the probe died, its reason, not a made-up value."""
    if key in torch_side:
        return torch_side[key]
    torch = torch_side.get("torch")
    reason = torch["error"] if is_error(torch) else "the torch probe did not report it"
    return error_record(reason)


def _other_devices(run: CommandRunner, torch_facts: Any) -> tuple[list[dict[str, Any]], dict]:
    """AMD devices through ROCm torch (with the node's ROCm versions and topology), or the Apple
    GPU; none on a CPU-only host. The second item holds the AMD node facts, empty off ROCm."""
    if is_error(torch_facts):
        return [], {}
    if torch_facts.get("build") == "rocm" and isinstance(torch_facts.get("devices"), list):
        return probe_amd(torch_facts["devices"])
    if is_apple_silicon():
        return [probe_apple_device(run, torch_facts.get("mps_available"))], {}
    return [], {}


def _origin() -> dict[str, Any]:
    return {
        "kind": "live",
        "command": shlex.join([sys.argv[0].rsplit("/", 1)[-1], *sys.argv[1:]]),
        "collected_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "rigcheck_version": rigcheck.__version__,
    }
