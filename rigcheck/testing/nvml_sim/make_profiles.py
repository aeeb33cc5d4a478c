"""Write profiles/machines/*.json from public `nvidia-smi -q -x` captures of real machines.

Run by hand (the captures are not vendored): fetch NVIDIA/k8s-test-infra, then
    python rigcheck/testing/nvml_sim/make_profiles.py CAPTURE_DIR
    PYTHONPATH=tests python rigcheck/testing/nvml_sim/make_profiles.py --derived   # from those
    and rigcheck
where CAPTURE_DIR is its tests/e2e/go/assertions/nvidiasmi/testdata/hardware (commit
3b2b865d91b1844baa9feeca2820d2fab65414c7; the captures' README says only serials and UUIDs were
scrubbed). What nvidia-smi -q does not print (NVLink links, compute capability, topology, CPU
affinity, absolute temperature thresholds on Hopper and later) comes from BOARD below, written by
hand with its source; each profile names both.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SOURCE = "NVIDIA/k8s-test-infra@3b2b865d tests/e2e/go/assertions/nvidiasmi/testdata/hardware/"
# What `nvidia-smi -q` does not print, by hand. NVLink counts and versions: NVIDIA's H100, A100
# and B200 datasheets (18 NVLink4, 12 NVLink3, 18 NVLink5); the nvml code is
# nvmlNvlinkVersion_t (6 = 4.0, 4 = 3.0, 7 = 5.0). Thresholds where the capture prints only
# T.Limit-relative values: NVIDIA's mock-nvml-config-*.yaml in the same repository
# (pkg/gpu/mocknvml/configs: slowdown_threshold_c, shutdown_threshold_c).
BOARD = {
    "h100_hgx": {
        "capture": "qx-h100.xml",
        "cc": [9, 0],
        "nvlink": (18, 6),
        "thresholds": {"slowdown_c": 87, "shutdown_c": 92},
        "numa_split": True,
    },
    "a100_sxm": {
        "capture": "qx-a100.xml",
        "cc": [8, 0],
        "nvlink": (12, 4),
        "thresholds": None,
        "numa_split": False,
    },
    "b200_hgx": {
        "capture": "qx-b200.xml",
        "cc": [10, 0],
        "nvlink": (18, 7),
        "thresholds": {"slowdown_c": 90, "shutdown_c": 95},  # mock-nvml-config-b200.yaml
        "numa_split": True,
    },
    "l40s": {
        "capture": "qx-l40s.xml",
        "cc": [8, 9],
        "nvlink": None,
        "thresholds": {"slowdown_c": 93, "shutdown_c": 96},  # mock-nvml-config-l40s.yaml
        "numa_split": False,
    },
}


def number(text: str | None) -> int | None:
    """'81559 MiB' -> 81559, '700.00 W' -> 700; None for N/A and friends."""
    head = (text or "").split(" ")[0].removesuffix("x")  # link widths print as "16x"
    try:
        return int(float(head))
    except ValueError:
        return None


def known(value: str | None) -> str | None:
    """A printed value, None for what nvidia-smi prints where NVML answered Not Supported."""
    return None if value in (None, "N/A", "[N/A]", "Not Supported") else value


def mib(text: str | None) -> int:
    return (number(text) or 0) * 1024 * 1024


def text(g: ET.Element, *paths: str) -> str | None:
    """The first of these elements a capture has: the DTDs renamed some (power_readings ->
    gpu_power_readings at R530, clocks_throttle_reasons -> clocks_event_reasons at R535)."""
    for path in paths:
        found = g.findtext(path)
        if found is not None:
            return found
    return None


def gpu_profile(g: ET.Element, board: dict[str, Any], index: int, count: int) -> dict[str, Any]:
    t = g.findtext
    ecc_mode = _ecc_mode(g)
    fabric_state = {"Completed": 3, "In Progress": 2, "Not Started": 1}.get(t("fabric/state"))
    return {
        "name": t("product_name"),
        "uuid": t("uuid"),
        "serial": known(t("serial")),  # N/A on GeForce: NVML answers Not Supported
        "vbios": t("vbios_version"),
        "inforom_image": t("inforom_version/img_version"),
        "inforom_objects": {
            "oem": t("inforom_version/oem_object"),
            "ecc": t("inforom_version/ecc_object"),
        },
        "pci": {
            "bus_id": t("pci/pci_bus_id"),
            "device_id": "0x" + t("pci/pci_device_id").lower().removeprefix("0x"),
            "subsystem_id": "0x" + t("pci/pci_sub_system_id").lower().removeprefix("0x"),
        },
        "compute_capability": board["cc"],
        "memory": {
            "total": mib(t("fb_memory_usage/total")),
            "free": mib(t("fb_memory_usage/free")),
            "used": mib(t("fb_memory_usage/used")),
        },
        "ecc_mode": ecc_mode,
        "ecc_errors": _ecc(g) if ecc_mode and ecc_mode[0] else None,
        "retired_pages": _retired(g),  # "N/A" on Ampere and later: rows are remapped instead
        "remapped_rows": _remapped(g),
        "clocks": {
            "sm": number(t("clocks/sm_clock")),
            "mem": number(t("clocks/mem_clock")),
            "graphics": number(t("clocks/graphics_clock")),
        },
        "max_clocks": {
            "sm": number(t("max_clocks/sm_clock")),
            "mem": number(t("max_clocks/mem_clock")),
        },
        "applications_clocks": _pair_clocks(g, "applications_clocks"),
        "default_applications_clocks": _pair_clocks(g, "default_applications_clocks"),
        "clock_ids_sm": {
            "app_target": number(t("applications_clocks/graphics_clock")),
            "app_default": number(t("default_applications_clocks/graphics_clock")),
            "customer_boost_max": number(t("max_customer_boost_clocks/graphics_clock")),
        },
        "clock_event_reasons": _reasons(g),
        "temperature_c": number(t("temperature/gpu_temp")),
        "temperature_thresholds": board["thresholds"] or _thresholds(g),
        "power": _power(g),
        "pcie": {
            "gen_current": number(t("pci/pci_gpu_link_info/pcie_gen/current_link_gen")),
            "gen_max": number(t("pci/pci_gpu_link_info/pcie_gen/max_link_gen")),
            "gen_device_max": number(t("pci/pci_gpu_link_info/pcie_gen/max_device_link_gen")),
            "width_current": number(t("pci/pci_gpu_link_info/link_widths/current_link_width")),
            "width_max": number(t("pci/pci_gpu_link_info/link_widths/max_link_width")),
            "replays": number(t("pci/replay_counter")),
        },
        "persistence_mode": {"Enabled": 1, "Disabled": 0}.get(t("persistence_mode") or ""),
        "mig_mode": None
        if t("mig_mode/current_mig") in (None, "N/A")
        else [
            int(t("mig_mode/current_mig") == "Enabled"),
            int(t("mig_mode/pending_mig") == "Enabled"),
        ],
        "processes": _processes(g),
        "fabric": None
        if fabric_state is None
        else {
            "state": fabric_state,
            "status": 0 if t("fabric/status") == "Success" else 999,
            "clique_id": number(t("fabric/cliqueId")) or 0,
            "cluster_uuid": "00" * 16,
        },
        "nvlink": _nvlink(board) if count > 1 else None,
        "nvml_numa_node": None,  # x86: NVML answers Not Supported; sysfs has the node
        "cpu_affinity": _affinity(board, index, count),
    }


def _ecc_mode(g: ET.Element) -> list[int] | None:
    """[current, pending]; None (NVML: Not Supported) where nvidia-smi prints N/A: a board
    without ECC (GeForce) is not a board with ECC turned off."""
    states = {"Enabled": 1, "Disabled": 0}
    current = states.get(g.findtext("ecc_mode/current_ecc") or "")
    pending = states.get(g.findtext("ecc_mode/pending_ecc") or "")
    return None if current is None else [current, current if pending is None else pending]


def _thresholds(g: ET.Element) -> dict[str, int | None]:
    """Absolute thresholds where the capture prints them; else from the T.Limit figures
    (Ada, Hopper and later print only those): nvidia-smi's T.Limit Temp is the margin below
    T.Limit now, the Slowdown/Shutdown T.Limit Temps are where those happen relative to
    T.Limit (-2 C: 2 C past it), so slowdown = current + margin - slowdown's figure."""
    t = g.findtext
    slowdown = number(t("temperature/gpu_temp_slow_threshold"))
    shutdown = number(t("temperature/gpu_temp_max_threshold"))
    margin, now = number(t("temperature/gpu_temp_tlimit")), number(t("temperature/gpu_temp"))
    if slowdown is None and margin is not None and now is not None:
        limit = now + margin
        slow = number(t("temperature/gpu_temp_slow_tlimit_threshold"))
        stop = number(t("temperature/gpu_temp_max_tlimit_threshold"))
        slowdown = None if slow is None else limit - slow
        shutdown = None if stop is None else limit - stop
    return {"slowdown_c": slowdown, "shutdown_c": shutdown}


def _power(g: ET.Element) -> dict[str, int | None]:
    """gpu_power_readings from R530's DTD, power_readings before it (with power_limit and
    enforced_power_limit beside each other)."""
    sections = ("gpu_power_readings", "power_readings")

    def mw(*names: str) -> int | None:
        return _mw(text(g, *(f"{s}/{n}" for s in sections for n in names)))

    return {
        "enforced_limit_mw": mw("current_power_limit", "enforced_power_limit"),
        "default_limit_mw": mw("default_power_limit"),
        "min_limit_mw": mw("min_power_limit"),
        "max_limit_mw": mw("max_power_limit"),
        "draw_mw": mw("instant_power_draw", "power_draw", "average_power_draw"),
    }


def _processes(g: ET.Element) -> dict[str, list[dict[str, int]]]:
    """process_info entries by type (C compute, G graphics, C+G both), with their memory."""
    out: dict[str, list[dict[str, int]]] = {"compute": [], "graphics": []}
    for proc in g.findall("processes/process_info"):
        entry = {"pid": number(proc.findtext("pid")) or 0,
                 "used_bytes": mib(proc.findtext("used_memory"))}  # fmt: skip
        kind = proc.findtext("type") or "C"
        for key, letter in (("compute", "C"), ("graphics", "G")):
            if letter in kind:
                out[key].append(entry)
    return out


def _retired(g: ET.Element) -> dict[str, Any] | None:
    """Pre-Ampere page retirement: the counts (the text form prints no addresses, so the
    simulator lists that many page numbers), and the pending flag; None where N/A."""
    single = number(text(g, "retired_pages/multiple_single_bit_retirement/retired_count",
                         "retired_pages/single_bit_ecc"))  # fmt: skip
    double = number(text(g, "retired_pages/double_bit_retirement/retired_count",
                         "retired_pages/double_bit_ecc"))  # fmt: skip
    pending = text(g, "retired_pages/pending_retirement", "retired_pages/pending_blacklist",
                   "retired_pages/pending_page_retirement",
                   "retired_pages/pending_page_blacklist", "retired_pages/pending")  # fmt: skip
    if single is None or double is None or pending not in ("Yes", "No"):
        return None
    return {
        "single_bit": list(range(single)),
        "double_bit": list(range(double)),
        "pending": int(pending == "Yes"),
    }


def _ecc(g: ET.Element) -> dict[str, int]:
    out = {}
    for span in ("volatile", "aggregate"):

        def n(name: str, span: str = span) -> int:
            return number(g.findtext(f"ecc_errors/{span}/{name}")) or 0

        out[f"dram_corrected_{span}"] = n("dram_correctable") + n("single_bit/total")
        out[f"dram_uncorrected_{span}"] = n("dram_uncorrectable") + n("double_bit/total")
        out[f"sram_corrected_{span}"] = n("sram_correctable")
        out[f"sram_uncorrected_{span}"] = (
            n("sram_uncorrectable_parity")
            + n("sram_uncorrectable_secded")
            + n("sram_uncorrectable")
        )
    return out


def _remapped(g: ET.Element) -> dict[str, int] | None:
    corr = number(g.findtext("remapped_rows/remapped_row_corr"))
    if corr is None:
        return None
    yes = {"Yes": 1, "No": 0}
    unc = number(g.findtext("remapped_rows/remapped_row_unc"))
    return {
        "correctable": corr,
        "uncorrectable": unc,
        "pending": yes[g.findtext("remapped_rows/remapped_row_pending")],
        "failure": yes[g.findtext("remapped_rows/remapped_row_failure")],
    }


def _pair_clocks(g: ET.Element, where: str) -> dict[str, int | None] | None:
    sm = number(g.findtext(f"{where}/graphics_clock"))
    mem = number(g.findtext(f"{where}/mem_clock"))
    return None if sm is None else {"sm": sm, "graphics": sm, "mem": mem}


# nvmlClocksEventReason* bits by nvidia-smi's element names
REASON_BITS = {
    "gpu_idle": 0x1,
    "applications_clocks_setting": 0x2,
    "sw_power_cap": 0x4,
    "hw_slowdown": 0x8,
    "sync_boost": 0x10,
    "sw_thermal_slowdown": 0x20,
    "hw_thermal_slowdown": 0x40,
    "hw_power_brake_slowdown": 0x80,
    "display_clocks_setting": 0x100,
}


def _reasons(g: ET.Element) -> int:
    mask = 0
    for name, bit in REASON_BITS.items():
        state = text(g, f"clocks_event_reasons/clocks_event_reason_{name}",
                     f"clocks_throttle_reasons/clocks_throttle_reason_{name}")  # fmt: skip
        if state == "Active":
            mask |= bit
    return mask


def _mw(text: str | None) -> int | None:
    head = (text or "").split(" ")[0]
    try:
        return round(float(head) * 1000)
    except ValueError:
        return None


def _nvlink(board: dict[str, Any]) -> dict[str, Any] | None:
    if board["nvlink"] is None:
        return None
    links, code = board["nvlink"]
    switches = ["0000:05:00.0", "0000:06:00.0", "0000:07:00.0", "0000:08:00.0"]
    return {
        "links": links,
        "version_code": code,
        "remote": "switch",
        "inactive": [],
        "remote_bus_ids": switches,
    }


def _affinity(board: dict[str, Any], index: int, count: int) -> str:
    """Two sockets of 56 cores with SMT (224 CPUs), half the GPUs on each: by hand."""
    node = 1 if board["numa_split"] and index >= count // 2 else 0
    return f"{56 * node}-{56 * node + 55},{112 + 56 * node}-{112 + 56 * node + 55}"


def main(capture_dir: Path) -> None:
    for name, board in BOARD.items():
        root = ET.parse(capture_dir / board["capture"]).getroot()
        gpus = root.findall("gpu")
        version = root.findtext("driver_version")
        cuda = root.findtext("cuda_version")
        profile = {
            "name": name,
            "source": f"{SOURCE}{board['capture']} (nvidia-smi -q -x, driver {version}); by hand: "
            "rigcheck/testing/nvml_sim/make_profiles.py BOARD",
            "driver_version": version,
            "cuda_driver_version": int(cuda.split(".")[0]) * 1000 + int(cuda.split(".")[1]) * 10,
            "gpus": [gpu_profile(g, board, i, len(gpus)) for i, g in enumerate(gpus)],
            "topology": _topology(board, len(gpus)),
        }
        out = HERE / "profiles" / "machines" / f"{name}.json"
        out.write_text(json.dumps(profile, indent=1) + "\n")
        print("wrote", out)


def _topology(board: dict[str, Any], count: int) -> dict[str, Any]:
    """By hand: GPUs on one socket meet at the host bridge's NUMA node, across sockets at SYS."""
    half = count // 2 if board["numa_split"] else count
    paths = [
        ["NODE" if (a < half) == (b < half) else "SYS" for b in range(count)] for a in range(count)
    ]
    p2p = "ok" if board["nvlink"] else "not_supported"
    return {
        "pcie_paths": paths,
        "p2p": {c: p2p for c in ("read", "write", "nvlink", "atomics", "prop")},
    }


# Boards with no public capture found: rigcheck's synthetic snapshot of the class, which says
# where its figures come from (the class's spec in expected/, with their sources).
SYNTHETIC = {"h100_pcie": "h100_pcie", "rtx4090": "rtx4090"}
# What rigcheck's own code and tests say a vGPU guest answers (rigcheck/facts/nvidia/nvml.py _power,
# clock_limits.py, tests/health/test_counter_probe.py, tests/replay/test_unsupported_reads.py):
# beliefs to check on a real guest, applied to the A100 capture. Not a capture of a guest.
VGPU_ANSWERS = {
    "nvmlDeviceGetPowerUsage": "NOT_SUPPORTED",
    "nvmlDeviceGetPowerManagementDefaultLimit": "NOT_SUPPORTED",
    "nvmlDeviceGetPowerManagementLimitConstraints": "NOT_SUPPORTED",
    "nvmlDeviceGetGpuMaxPcieLinkGeneration": "NOT_SUPPORTED",
    "nvmlDeviceGetPcieReplayCounter": "NOT_SUPPORTED",
    "nvmlDeviceGetClock": "NO_PERMISSION",
    "nvmlDeviceGetInforomImageVersion": "NO_PERMISSION",
}


def derived() -> None:
    """The profiles made from others: synthetic boards and the vGPU guest."""
    from rigcheck.spec import load_spec
    from rigcheck.testing.nvml_sim.from_facts import profile_from_snapshot
    from rigcheck.testing.synthetic import synthetic_snapshot

    machines = HERE / "profiles" / "machines"
    for name, spec in SYNTHETIC.items():
        profile = profile_from_snapshot(synthetic_snapshot(load_spec(spec), gpus=1), name)
        profile["source"] = (
            f"synthetic: rigcheck.testing.synthetic's {spec} snapshot (the figures of "
            f"expected/{spec}.json), not a machine: no public capture was found"
        )
        gpu = profile["gpus"][0]
        gpu["cpu_affinity"] = "0-31"
        profile["topology"] = {"pcie_paths": [["NODE"]], "p2p": dict.fromkeys(P2P, "ok")}
        (machines / f"{name}.json").write_text(json.dumps(profile, indent=1) + "\n")
    guest = json.loads((machines / "a100_sxm.json").read_text())
    guest["name"] = "vgpu_a100"
    guest["source"] = (
        "by hand: a100_sxm (the capture) as rigcheck's code and tests say a vGPU guest answers "
        "(make_profiles.py VGPU_ANSWERS): to be checked on a real guest"
    )
    guest["gpus"][0]["answers"] = dict(VGPU_ANSWERS)
    guest["gpus"][0]["nvlink"] = None  # a guest sees no NVLink of its own
    (machines / "vgpu_a100.json").write_text(json.dumps(guest, indent=1) + "\n")


P2P = ("read", "write", "nvlink", "atomics", "prop")

# What a capture of a board does not print, by product name, for captures from anyone
# (fixtures/nvidia_smi): compute capability (NVIDIA's CUDA GPUs table,
# developer.nvidia.com/cuda-gpus) and NVLink (count, nvmlNvlinkVersion_t code) for boards
# built with it (the datasheets, as in BOARD above), assumed all up on a healthy node.
PRODUCTS = {
    "Tesla T4": ([7, 5], None),
    "NVIDIA A10G": ([8, 6], None),
    "NVIDIA A10": ([8, 6], None),
    "NVIDIA A100-SXM4-40GB": ([8, 0], (12, 4)),
    "NVIDIA A100-SXM4-80GB": ([8, 0], (12, 4)),
    "NVIDIA H100 80GB HBM3": ([9, 0], (18, 6)),
    "NVIDIA H100 NVL": ([9, 0], None),
    "NVIDIA B200": ([10, 0], (18, 7)),
    "NVIDIA GB200": ([10, 0], (18, 7)),
    "NVIDIA GB300": ([10, 3], (18, 7)),
    "NVIDIA L4": ([8, 9], None),
    "NVIDIA L40S": ([8, 9], None),
    "NVIDIA GeForce RTX 3090": ([8, 6], None),
    "NVIDIA GeForce RTX 4090": ([8, 9], None),
    "NVIDIA RTX 6000 Ada Generation": ([8, 9], None),
    "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition": ([12, 0], None),
    "NVIDIA H200": ([9, 0], (18, 6)),
    "NVIDIA GH200 480GB": ([9, 0], None),
    "NVIDIA GeForce RTX 5090": ([12, 0], None),
    "Tesla V100-SXM2-16GB": ([7, 0], (6, 2)),
    "Tesla V100-SXM2-32GB": ([7, 0], (6, 2)),
}


def capture_profile(root: ET.Element, name: str, source: str) -> dict[str, Any]:
    """A machine profile from any capture (`-q -x` of any DTD, or `-q` text read by
    capture_text.read_capture): what the capture prints, PRODUCTS for what it does not."""
    gpus = root.findall("gpu")
    cc, nvlink = PRODUCTS[gpus[0].findtext("product_name")]
    board = {"cc": cc, "nvlink": nvlink, "thresholds": None, "numa_split": len(gpus) >= 8}
    cuda = root.findtext("cuda_version") or "0.0"
    major, minor = (int(x) for x in cuda.split(".")[:2])
    return {
        "name": name,
        "source": f"{source}; by hand: make_profiles.py PRODUCTS (compute capability, NVLink), "
        "the CPU affinity and topology (_affinity, _topology)",
        "driver_version": root.findtext("driver_version"),
        "cuda_driver_version": major * 1000 + minor * 10,
        "gpus": [gpu_profile(g, board, i, len(gpus)) for i, g in enumerate(gpus)],
        "topology": _topology(board, len(gpus)),
    }


if __name__ == "__main__":
    if sys.argv[1:] == ["--derived"]:
        derived()
    else:
        main(Path(sys.argv[1]))
