"""A machine profile from a partial capture: what it printed, and which facts those are.

A partial capture (the `nvidia-smi` table, a `-q -d SECTION` excerpt) holds a few facts of a
real machine. The profile answers those from the capture; every other answer comes from the
class's synthetic machine (rigcheck.testing.synthetic, through from_facts), only so that the
probes run. `held` names the facts the capture holds, as fact paths with `*` for the GPU; a
check that reads any other fact is not judged by the replay (tests/replay/
test_partial_captures.py), so a synthetic value never passes or fails a real machine.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from rigcheck.testing.nvml_sim.from_facts import profile_from_snapshot
from rigcheck.testing.nvml_sim.make_profiles import (
    _affinity,
    _reasons,
    _retired,
    _topology,
    known,
    mib,
    number,
    text,
)

# Every record names its GPU and vendor: the probe writes them from the handle it holds.
ALWAYS = {"devices.*.index", "devices.*.vendor"}
ENABLED = {"Enabled": 1, "Disabled": 0}


def partial_machine(root: ET.Element, synthetic: dict[str, Any], name: str,
                    source: str) -> tuple[dict[str, Any], set[str]]:  # fmt: skip
    """(machine profile, the fact paths the capture holds)."""
    captured = root.findall("gpu")
    filler = profile_from_snapshot(synthetic, name)
    if len(filler["gpus"]) != len(captured):
        raise ValueError(f"{name}: {len(captured)} GPUs captured, {len(filler['gpus'])} filled")
    held = set(ALWAYS)
    for index, (gpu, g) in enumerate(zip(filler["gpus"], captured, strict=True)):
        held |= _overlay(gpu, g)
        gpu["cpu_affinity"] = _affinity({"numa_split": len(captured) >= 8}, index, len(captured))
    driver, cuda = root.findtext("driver_version"), root.findtext("cuda_version")
    if driver:
        filler["driver_version"] = driver
        held.add("software.nvidia_driver.version")
    if cuda and cuda[0].isdigit():  # a vGPU host prints "Not Found"
        major, minor = (int(x) for x in cuda.split(".")[:2])
        filler["cuda_driver_version"] = major * 1000 + minor * 10
        held.add("software.nvidia_driver.cuda_driver_version")
    nvlink = filler["gpus"][0].get("nvlink")
    filler["topology"] = _topology({"numa_split": len(captured) >= 8, "nvlink": nvlink},
                                   len(captured))  # fmt: skip
    filler["source"] = f"{source}; the rest synthetic (partial.py): judged only where held"
    return filler, held


def _overlay(gpu: dict[str, Any], g: ET.Element) -> set[str]:
    """Put what the capture printed for one GPU into its profile; the facts that fed."""
    t = g.findtext
    held = set()

    def put(element: str, fact: str, apply) -> None:
        if t(element) is not None:
            apply(t(element))
            held.add(f"devices.*.{fact}")

    put("product_name", "name", lambda v: gpu.update(name=v))
    bus = t("pci/pci_bus_id") or g.get("id")  # the "GPU BUS" heading names it too
    if bus:
        gpu["pci"]["bus_id"] = bus
        held.add("devices.*.pci.bus_id")
    put("persistence_mode", "persistence_mode",
        lambda v: gpu.update(persistence_mode=ENABLED[v]))  # fmt: skip
    put("temperature/gpu_temp", "temperature_c", lambda v: gpu.update(temperature_c=number(v)))
    put("ecc_mode/current_ecc", "ecc.current", lambda v: _ecc_mode(gpu, v))
    put("ecc_errors/volatile/total_uncorrectable", "ecc_errors.volatile_uncorrected",
        lambda v: _volatile_uncorrected(gpu, int(v)))  # fmt: skip
    put("mig_mode/current_mig", "mig.current", lambda v: _mig(gpu, v))
    put("fb_memory_usage/total", "memory_total_bytes", lambda v: _memory(gpu, g))
    power = (("power_draw", "draw_mw", "draw_w"),
             ("current_power_limit", "enforced_limit_mw", "limit_w"))  # fmt: skip
    for element, key, fact in power:
        put(f"gpu_power_readings/{element}", f"power.{fact}",
            lambda v, key=key: gpu["power"].update({key: _mw(v)}))  # fmt: skip
    if g.find("processes") is not None:
        gpu["processes"] = _processes(g)
        held.add("devices.*.processes")
    if g.find("clocks_event_reasons") is not None or g.find("clocks_throttle_reasons") is not None:
        gpu["clock_event_reasons"] = _reasons(g)
        held.add("devices.*.throttle_reasons")
    put("pci/pci_device_id", "pci.device_id",
        lambda v: gpu["pci"].update(device_id="0x" + v.lower().removeprefix("0x")))  # fmt: skip
    put("uuid", "uuid", lambda v: gpu.update(uuid=v))
    return held | _memory_repair(gpu, g) | _link(gpu, g) | _nvlink(gpu, g)


def _nvlink(gpu: dict[str, Any], g: ET.Element) -> set[str]:
    """Which links `nvlink -s` lists and which are up; not their NVLink version, which it
    does not print ("=": that fact exactly, not the facts below it)."""
    links = g.findall("nvlink_links/link")
    if not links or gpu.get("nvlink") is None:
        return set()
    gpu["nvlink"]["links"] = len(links)
    gpu["nvlink"]["inactive"] = [int(x.get("id")) for x in links if x.get("state") != "active"]
    return {"=devices.*.nvlink", "devices.*.nvlink.*.link", "devices.*.nvlink.*.active"}


def _memory_repair(gpu: dict[str, Any], g: ET.Element) -> set[str]:
    """Remapped rows (Ampere and later) and retired pages (earlier), where printed."""
    held = set()
    rows = {"correctable": "remapped_row_corr", "uncorrectable": "remapped_row_unc",
            "pending": "remapped_row_pending", "failure": "remapped_row_failure"}  # fmt: skip
    for key, element in rows.items():  # an excerpt may print some of them
        value = g.findtext(f"remapped_rows/{element}")
        if value is not None and gpu["remapped_rows"] is not None:
            gpu["remapped_rows"][key] = {"Yes": 1, "No": 0}.get(value, number(value))
            held.add(f"devices.*.remapped_rows.{key}")
    if g.find("retired_pages") is not None:  # N/A from Ampere on: NVML's Not Supported
        gpu["retired_pages"] = _retired(g)
        held.add("devices.*.retired_pages")
    return held


LINK = {"gen_current": "pcie_gen/current_link_gen", "gen_max": "pcie_gen/max_link_gen",
        "gen_device_max": "pcie_gen/max_device_link_gen",
        "width_current": "link_widths/current_link_width",
        "width_max": "link_widths/max_link_width"}  # fmt: skip


def _link(gpu: dict[str, Any], g: ET.Element) -> set[str]:
    """The PCIe link as printed; the replay count is the facts' pcie_replays."""
    held = set()
    for key, path in LINK.items():
        value = number(g.findtext(f"pci/pci_gpu_link_info/{path}"))
        if value is not None:
            gpu["pcie"][key] = value
            held.add(f"devices.*.pcie.{key}")
    replays = number(g.findtext("pci/replay_counter"))
    if replays is not None:
        gpu["pcie"]["replays"] = replays
        held.add("devices.*.pcie_replays")
    return held


def _ecc_mode(gpu: dict[str, Any], state: str) -> None:
    """Current only (the table prints no pending mode: the filler's is kept, not held). N/A is
    NVML's Not Supported: a board without ECC has no counters either."""
    if state not in ENABLED:
        gpu["ecc_mode"], gpu["ecc_errors"] = None, None
        return
    pending = gpu["ecc_mode"][1] if gpu["ecc_mode"] else ENABLED[state]
    gpu["ecc_mode"] = [ENABLED[state], pending]


def _volatile_uncorrected(gpu: dict[str, Any], count: int) -> None:
    """The table's count is NVML's volatile uncorrected total: DRAM and SRAM together."""
    gpu["ecc_errors"]["dram_uncorrected_volatile"] = count
    gpu["ecc_errors"]["sram_uncorrected_volatile"] = 0
    errors = gpu["ecc_errors"]
    for span in ("dram", "sram"):  # a lifetime count is never below the count since boot
        key = f"{span}_uncorrected_aggregate"
        errors[key] = max(errors[key], errors[f"{span}_uncorrected_volatile"])


def _mig(gpu: dict[str, Any], state: str) -> None:
    gpu["mig_mode"] = None if state not in ENABLED else [ENABLED[state], ENABLED[state]]


def _memory(gpu: dict[str, Any], g: ET.Element) -> None:
    """Total as printed; free as total less used (the table prints no reserved memory, so
    free is not held)."""
    total, used = mib(g.findtext("fb_memory_usage/total")), mib(g.findtext("fb_memory_usage/used"))
    gpu["memory"] = {"total": total, "used": used, "free": total - used}


def _mw(value: str) -> int | None:
    watts = number(known(value))
    return None if watts is None else watts * 1000


def _processes(g: ET.Element) -> dict[str, list[dict[str, int]]]:
    out: dict[str, list[dict[str, int]]] = {"compute": [], "graphics": []}
    for proc in g.findall("processes/process_info"):
        entry = {"pid": number(proc.findtext("pid")) or 0,
                 "used_bytes": mib(proc.findtext("used_memory"))}  # fmt: skip
        kind = text(proc, "type") or "C"
        for key, letter in (("compute", "C"), ("graphics", "G")):
            if letter in kind:
                out[key].append(entry)
    return out
