"""What amdsmi answers differently across the ROCm releases the AMD classes allow (6.0 on), read
from AMD's own amdsmi packages (PyPI amdsmi 6.0.0 ... 7.0.2) and its CHANGELOG, and run through
the real packages in the self-tests (tests/amdsmi_real):

- amdsmi_get_power_cap_info: watts before ROCm 6.1.2, microwatts from it on (CHANGELOG, ROCm
  6.1.2: "`amdsmi_get_power_cap_info` now returns values in uW instead of W").
- amdsmi_get_gpu_bad_page_info: the string "No bad pages found." for none before ROCm 6.1.2
  (CHANGELOG, 6.1.2: "now it only returns the list type and can be empty").
- amdsmi_get_gpu_bad_page_threshold: not in any amdsmi package before 7.0.
- amdsmi_get_pcie_info: not in ROCm 6.0's; it has amdsmi_get_pcie_link_status / _link_caps
  (speeds in MT/s, py-interface README) and amdsmi_get_gpu_pci_replay_counter.
- amdsmi_get_gpu_xgmi_link_status: not before ROCm 6.4's (before it amd_smi._xgmi_by_topology
  counts the peers amdsmi_topo_get_link_type reports one xGMI hop away).
- amdsmi_get_violation_status: not before ROCm 6.3's (6.3 has the five active_/per_ kinds; 6.4
  adds gfx_clk_below_host_limit, 7.0 per-XCP arrays, which rigcheck does not read).
- amdsmi_get_gpu_process_list: ROCm 6.0's answers process handles, each read with
  amdsmi_get_gpu_process_info; later ones answer the records themselves.
- `import amdsmi` of ROCm 6.0-6.1 reads os.environ["ROCM_PATH"]: KeyError when it is unset.
- A package newer than the host's libamd_smi (PyPI's amdsmi 7.0 over ROCm 6.x) fails at import:
  its wrapper binds symbols the older library lacks (AttributeError: undefined symbol).
"""

from __future__ import annotations

from typing import Any

NO_BAD_PAGES = "No bad pages found."  # amdsmi before ROCm 6.1.2, for an empty list
# A cap read as more than this is microwatts (100 kW would be no GPU's cap; 0.1 W no real cap).
WATTS_AT_MOST = 100_000


def watts(value: Any) -> float:
    """A power cap amdsmi answered, in watts, whichever unit its release used."""
    number = float(value)
    return number if number <= WATTS_AT_MOST else number / 1e6


def bad_page_list(answer: Any) -> list[Any]:
    """amdsmi_get_gpu_bad_page_info's answer as a list (older releases: a sentence for none)."""
    if isinstance(answer, str):
        if answer.strip() == NO_BAD_PAGES:
            return []
        raise ValueError(f"amdsmi_get_gpu_bad_page_info answered {answer!r}, not a page list")
    return list(answer)


def pcie_link_rocm60(smi: Any, h: Any, number: Any, gen: Any) -> dict[str, Any]:
    """ROCm 6.0's PCIe reads: the link now and at most, and the replay counter (no NAK or
    recovery counters in that release: None, as amdsmi's "N/A")."""
    status, caps = smi.amdsmi_get_pcie_link_status(h), smi.amdsmi_get_pcie_link_caps(h)
    return {
        "gen_current": gen(status["pcie_speed"]),
        "gen_max": gen(caps["max_pcie_speed"]),
        "width_current": number(status["pcie_lanes"]),
        "width_max": number(caps["max_pcie_lanes"]),
        "replays": number(smi.amdsmi_get_gpu_pci_replay_counter(h)),
        "recoveries": None,
        "nak_sent": None,
        "nak_received": None,
    }


def process_records(smi: Any, h: Any, answer: list[Any]) -> list[dict[str, Any]]:
    """The process list as records: ROCm 6.0's amdsmi answers handles to read one by one."""
    return [p if isinstance(p, dict) else smi.amdsmi_get_gpu_process_info(h, p) for p in answer]


def import_advice(exc: Exception) -> str:
    """What to do when `import amdsmi` itself failed."""
    if isinstance(exc, KeyError) and exc.args == ("ROCM_PATH",):
        return (
            "this amdsmi (ROCm 6.0-6.1) needs ROCM_PATH at import: `export ROCM_PATH=/opt/rocm` "
            "and run again"
        )
    if isinstance(exc, AttributeError) and "undefined symbol" in str(exc):
        return (
            "this amdsmi package is newer than the host's libamd_smi (a PyPI amdsmi over an "
            "older ROCm?): install the one that ships with the host's ROCm instead "
            "(`pip install /opt/rocm/share/amd_smi`)"
        )
    return (
        "install ROCm's amdsmi (/opt/rocm/share/amd_smi, `pip install /opt/rocm/share/amd_smi`) "
        "on the ROCm host"
    )
