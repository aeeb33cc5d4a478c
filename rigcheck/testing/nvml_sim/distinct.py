"""Machine profiles whose every NVML number is distinct (hypothesis), and the pairs of fields a
probe could confuse: see rigcheck/testing/distinct.py.

Profile keys are named after the nvml.h parameters and struct fields the simulator writes
(library.py), so a fact that equals its profile field holds the field nvml.h names.
"""

from __future__ import annotations

from typing import Any

from rigcheck.testing.distinct import Path, get, numbers, put, with_values
from rigcheck.testing.nvml_sim.profiles import machine_profile

# The answers whose numbers a probe copies into facts. Left as captured: identity (names, PCI
# ids, compute capability), NVLink and topology (links.py), processes, fabric state (an enum).
VARIED = ("memory", "ecc_errors", "remapped_rows", "clocks", "max_clocks",
          "applications_clocks", "default_applications_clocks", "clock_ids_sm",
          "temperature_c", "temperature_thresholds", "power", "pcie",
          "clock_event_reasons")  # fmt: skip
# Two 0/1 out-parameters of one call: distinct means one set and the other not.
FLAGS = (("ecc_mode", 0, 1), ("mig_mode", 0, 1), ("remapped_rows", "pending", "failure"))
FABRIC = (("fabric", "status"), ("fabric", "clique_id"))
LARGEST = 2**31 - 1  # fits every out-parameter the varied answers use (c_int in the fabric)


def varied_paths(machine: dict[str, Any]) -> list[Path]:
    """Every numeric leaf the distinct mode replaces, over all the machine's GPUs."""
    paths = []
    for i, gpu in enumerate(machine["gpus"]):
        for key in VARIED:
            paths += [("gpus", i, key, *p) if p else ("gpus", i, key) for p in _leaves(gpu, key)]
        paths += [("gpus", i, *p) for p in FABRIC if isinstance(get(gpu, p), int)]
    return [p for p in paths if not _is_flag(p)]


def _leaves(gpu: dict[str, Any], key: str) -> list[Path]:
    value = gpu.get(key)
    if isinstance(value, int) and not isinstance(value, bool):
        return [()]
    return list(numbers(value)) if isinstance(value, dict) else []


def _is_flag(path: Path) -> bool:
    return any(path[2] == key and path[3:] in ((a,), (b,)) for key, a, b in FLAGS)


def numbered_machine(name: str, gpus: int = 2) -> dict[str, Any]:
    """One such machine without hypothesis: the varied numbers 1, 2, 3... in path order."""
    machine = machine_profile(name)
    machine["gpus"] = machine["gpus"][:gpus]
    paths = varied_paths(machine)
    flips = [True] * len(machine["gpus"]) * len(FLAGS)
    return _flagged(with_values(machine, paths, list(range(1, len(paths) + 1))), flips)


def distinct_machine(name: str, gpus: int = 2) -> Any:
    """A hypothesis strategy: profile NAME cut to `gpus` GPUs, every varied number distinct
    (within a GPU and across them), each flag pair set one way or the other."""
    from hypothesis import strategies as st  # a self-test dependency, not a runtime one

    machine = machine_profile(name)
    machine["gpus"] = machine["gpus"][:gpus]
    paths = varied_paths(machine)
    values = st.lists(st.integers(1, LARGEST), min_size=len(paths), max_size=len(paths),
                      unique=True)  # fmt: skip
    flips = st.lists(st.booleans(), min_size=len(machine["gpus"]) * len(FLAGS),
                     max_size=len(machine["gpus"]) * len(FLAGS))  # fmt: skip
    return st.builds(lambda v, f: _flagged(with_values(machine, paths, v), f), values, flips)


def _flagged(machine: dict[str, Any], flips: list[bool]) -> dict[str, Any]:
    flips = iter(flips)
    for gpu in machine["gpus"]:
        for key, a, b in FLAGS:
            first = next(flips)
            if isinstance(gpu.get(key), (dict, list)):
                put(gpu, (key, a), int(first))
                put(gpu, (key, b), int(not first))
    return machine


def _pairs(*names: str, under: str) -> list[tuple[Path, Path]]:
    return [((under, a), (under, b)) for i, a in enumerate(names) for b in names[i + 1 :]]


# Fields of one GPU's profile that a probe reading the wrong one would confuse: the fields of one
# NVML answer, and the current and maximum (or default) of one quantity.
SWAPPABLE: list[tuple[Path, Path]] = [
    *_pairs("total", "free", "used", under="memory"),
    *[(("ecc_errors", f"{w}_corrected_{s}"), ("ecc_errors", f"{w}_uncorrected_{s}"))
      for w in ("dram", "sram") for s in ("volatile", "aggregate")],
    *[(("ecc_errors", f"{w}_{k}_volatile"), ("ecc_errors", f"{w}_{k}_aggregate"))
      for w in ("dram", "sram") for k in ("corrected", "uncorrected")],
    *_pairs("correctable", "uncorrectable", under="remapped_rows"),
    (("remapped_rows", "pending"), ("remapped_rows", "failure")),
    *_pairs("gen_current", "gen_max", "gen_device_max", under="pcie"),
    *_pairs("width_current", "width_max", under="pcie"),
    *_pairs("sm", "graphics", "mem", under="clocks"),
    (("clocks", "sm"), ("max_clocks", "sm")),
    (("clocks", "mem"), ("max_clocks", "mem")),
    (("applications_clocks", "sm"), ("default_applications_clocks", "sm")),
    (("applications_clocks", "mem"), ("default_applications_clocks", "mem")),
    *_pairs("app_target", "app_default", "customer_boost_max", under="clock_ids_sm"),
    *_pairs("slowdown_c", "shutdown_c", under="temperature_thresholds"),
    *_pairs("enforced_limit_mw", "default_limit_mw", "min_limit_mw", "max_limit_mw",
            under="power"),
    (("retired_pages", "single_bit"), ("retired_pages", "double_bit")),
]  # fmt: skip
