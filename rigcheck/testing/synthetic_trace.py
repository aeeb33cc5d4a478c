"""Synthetic burn-in traces: a healthy node under load, and the faults a burn-in must catch.

CI has no GPU, so the burn-in checks are judged on traces written here: the good trace must
pass, and each fault must fail at its named check (tests/burnin). The figures are invented to
look like an H100 SXM node at its 700 W cap (a 1,980 MHz maximum SM clock, ~1,755 MHz sustained,
~700 TFLOP/s bf16), not read from a machine; the origin says so.

    python -m rigcheck.testing.synthetic_trace --write DIR          # good.json and one file per
    fault
    python -m rigcheck.testing.synthetic_trace thermal_throttle      # one trace on stdout
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rigcheck.burnin.trace import KIND, SCHEMA_VERSION, save_trace

NOTE = "synthetic: written by rigcheck/testing/synthetic_trace.py, not read from a machine"
NAME, CLOCK_MAX, SUSTAINED, TFLOPS = "NVIDIA H100 80GB HBM3", 1980, 1755, 700.0
POWER_LIMIT, SLOWDOWN_C, SHUTDOWN_C = 700.0, 87, 92
CHECKSUM = 0x1F2E3D4C5B6A  # the same GEMM on the same inputs: one value on every healthy GPU
BUS_IDS = ["0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0"]


def good_trace(gpus: int = 4, duration_s: float = 180.0, interval_s: float = 0.2) -> dict:
    """A healthy node: capped at its power limit, cool, steady, every checksum the same."""
    rng = random.Random(13)
    trace = header("h100", "cuda", duration_s, interval_s, NOTE)
    gemm_end = trace["phases"][0]["end_s"]
    trace.update(
        devices=[_device(i, rng, duration_s, interval_s, gemm_end) for i in range(gpus)],
        events={"xid": [], "nvrm": []},
        rdma_counters={"before": _rdma_sample(0.0), "after": _rdma_sample(duration_s)},
    )
    return trace


def header(cls: str, backend: str, duration_s: float, interval_s: float, note: str) -> dict:
    """A synthetic trace's fields but its devices and events: five sixths GEMM, then memory."""
    gemm_end = duration_s * 5 / 6
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": KIND,
        "origin": {"kind": "synthetic", "note": note},
        "class": cls,
        "backend": backend,
        "precision": "bf16",
        "duration_s": duration_s,
        "interval_s": interval_s,
        "phases": [
            {"name": "gemm", "start_s": 0.0, "end_s": gemm_end},
            {"name": "memory", "start_s": gemm_end, "end_s": duration_s},
        ],
    }


def _rdma_sample(t: float) -> dict:
    """Four healthy ConnectX ports: every error counter 0, as the real mlx5_0 in
    prometheus/procfs's sysfs fixture (fixtures/fabric/counters/procfs-healthy.txt)."""
    zero = dict.fromkeys(("symbol_error", "link_error_recovery", "link_downed",
                          "port_rcv_errors", "port_xmit_discards"), 0)  # fmt: skip
    ports = {f"mlx5_{i}/1": {"counters": dict(zero), "hw_counters": None} for i in range(4)}
    return {"t": 1.7e9 + t, "ports": ports}


def _device(i: int, rng: random.Random, duration: float, interval: float, gemm_end: float):
    times = [round(k * interval, 3) for k in range(int(duration / interval) + 1)]
    load = [t <= gemm_end for t in times]
    free = 79 * 2**30
    return {
        "id": f"gpu{i}",
        "index": i,
        "name": NAME,
        "bus_id": BUS_IDS[i % len(BUS_IDS)],
        "limits": {
            "clock_max_mhz": CLOCK_MAX,
            "power_limit_w": POWER_LIMIT,
            "pcie_width_max": 16,
            "slowdown_temp_c": SLOWDOWN_C,
            "shutdown_temp_c": SHUTDOWN_C,
        },
        "samples": {
            "t_s": times,
            "clock_mhz": [SUSTAINED + rng.randint(-15, 15) if on else 1980 for on in load],
            "mem_clock_mhz": [2619 for _ in times],
            "pcie_width": [16 if on else 8 for on in load],  # narrow once the load stops
            "power_w": [
                min(POWER_LIMIT, 120 + t * 200) - rng.random() * 8 if on else 430
                for t, on in zip(times, load, strict=True)
            ],
            "temperature_c": [round(38 + 34 * min(1.0, t / 60) + rng.random(), 1) for t in times],
            "reasons": [
                ["sw_power_cap"] if on and t > 3 else [] for t, on in zip(times, load, strict=True)
            ],
        },
        "windows": _windows(rng, gemm_end),
        "memory_test": {
            "bytes_free": free,
            "bytes_tested": int(free * 0.9) // 4 * 4,
            "passes": ["walking_ones", "random"],
            "errors": 0,
            "first_error": None,
        },
        "counters_before": _counters(),
        "counters_after": _counters(),
    }


def _windows(rng: random.Random, gemm_end: float) -> dict[str, list]:
    times = [float(t) for t in range(1, int(gemm_end) + 1)]
    return {
        "t_s": times,
        "tflops": [round(TFLOPS * (1 + rng.uniform(-0.01, 0.01)), 2) for _ in times],
        "checksum": [CHECKSUM for _ in times],
        "checks": [20 for _ in times],
        "mismatches": [0 for _ in times],
    }


def _counters() -> dict[str, int]:
    return {
        "ecc_uncorrected": 0,
        "ecc_corrected": 3,
        "remapped_rows_uncorrectable": 0,
        "remapped_rows_correctable": 1,
        "remap_pending": 0,
        "pcie_replays": 0,
    }


# -- faults: each changes one GPU the way that fault shows in the telemetry ----------------------


def thermal_throttle(trace: dict) -> None:
    """gpu1's cooling fails: from 90 s it reaches its slowdown temperature and clocks down."""
    d = trace["devices"][1]
    s = d["samples"]
    for k, t in enumerate(s["t_s"]):
        if t >= 90:
            s["temperature_c"][k] = SLOWDOWN_C + 1
            s["reasons"][k] = ["sw_thermal_slowdown", "hw_thermal_slowdown"]
            s["clock_mhz"][k] = int(SUSTAINED * 0.65)
            s["power_w"][k] = POWER_LIMIT * 0.7
    w = d["windows"]
    w["tflops"] = [v * 0.65 if t >= 90 else v for t, v in zip(w["t_s"], w["tflops"], strict=True)]


def clock_sag(trace: dict) -> None:
    """gpu2 runs 15% below the others from the start (a weak part or a bad VBIOS setting)."""
    d = trace["devices"][2]
    d["samples"]["clock_mhz"] = [int(v * 0.85) for v in d["samples"]["clock_mhz"]]
    d["windows"]["tflops"] = [round(v * 0.85, 2) for v in d["windows"]["tflops"]]


def xid_79(trace: dict) -> None:
    """An Xid 79 (GPU fallen off the bus) in the kernel log mid-run."""
    trace["events"]["xid"].append(
        {"t_s": 95.0, "code": 79, "device": "0000:5d:00.0", "text": "GPU has fallen off the bus."}
    )


def nvrm_fallen_off_bus(trace: dict) -> None:
    """gpu3 falls off the bus mid-run and the driver logs no Xid: the open driver's record of
    NVIDIA/NVSentinel#155 (fixtures/realworld/kernel_log.json), as rigcheck.facts.kernel_log.nvrm
    reads
    it, with its bus id changed from 0000:b3:00.0 to gpu3's (the one edit)."""
    trace["events"]["nvrm"].append(
        {
            "t_s": 95.0,
            "kind": "fallen_off_bus",
            "device": "0000:5d:00.0",
            "text": "NVRM: The NVIDIA GPU 0000:5d:00.0 NVRM: (PCI ID: 10de:26b5) installed in "
            "this system has NVRM: fallen off the bus and is not responding to commands.",
        }
    )


def checksum_mismatch(trace: dict) -> None:
    """gpu0 computes one wrong result in one window: silent data corruption."""
    trace["devices"][0]["windows"]["mismatches"][70] = 1


def checksum_differs_across_gpus(trace: dict) -> None:
    """gpu3 computes the same GEMM differently from the other three, every time."""
    w = trace["devices"][3]["windows"]
    w["checksum"] = [CHECKSUM ^ 0x10 for _ in w["checksum"]]


def memory_pattern_error(trace: dict) -> None:
    """One word of gpu1's memory reads back with a bit flipped."""
    m = trace["devices"][1]["memory_test"]
    m["errors"] = 1
    m["first_error"] = {
        "pattern": "walking_ones",
        "offset_bytes": 51_539_607_552,
        "expected": 0x00000400,
        "found": 0x00000C00,
    }


def power_stuck_60(trace: dict) -> None:
    """gpu3 never draws more than 60% of its TDP (a power brake or a bad power connector)."""
    s = trace["devices"][3]["samples"]
    s["power_w"] = [min(v, 700 * 0.6) for v in s["power_w"]]
    s["reasons"] = [[] for _ in s["reasons"]]


def ecc_error(trace: dict) -> None:
    """gpu0 counts a new uncorrectable ECC error during the load."""
    trace["devices"][0]["counters_after"]["ecc_uncorrected"] = 1


def pcie_replays(trace: dict) -> None:
    """gpu2's PCIe link replays 200 packets during the load (DCGM's limit is 80)."""
    trace["devices"][2]["counters_after"]["pcie_replays"] = 200


# fault -> (its function, the check it must fail, other checks the same fault fails with)
FAULTS: dict[str, tuple[Callable[[dict], None], str, set[str]]] = {
    "thermal_throttle": (
        thermal_throttle,
        "test_no_thermal_or_power_brake_slowdown",
        {"test_temperature_below_slowdown_threshold", "test_throughput_holds"},
    ),
    "clock_sag": (clock_sag, "test_clock_close_to_node_median", set()),
    "xid_79": (xid_79, "test_no_xid_events", set()),
    "nvrm_fallen_off_bus": (nvrm_fallen_off_bus, "test_no_nvrm_fault_records", set()),
    "checksum_mismatch": (checksum_mismatch, "test_gemm_bit_identical_across_repeats", set()),
    "checksum_differs_across_gpus": (
        checksum_differs_across_gpus,
        "test_gemm_bit_identical_across_devices",
        set(),
    ),
    "memory_pattern_error": (memory_pattern_error, "test_memory_pattern_test_clean", set()),
    "power_stuck_60": (power_stuck_60, "test_power_reaches_fraction_of_tdp", set()),
    "ecc_error": (ecc_error, "test_no_new_ecc_errors", set()),
    "pcie_replays": (pcie_replays, "test_no_new_pcie_replays", set()),
}


def faulty_trace(fault: str, **kwargs: Any) -> dict:
    trace = copy.deepcopy(good_trace(**kwargs))
    FAULTS[fault][0](trace)
    trace["origin"]["note"] = f"{NOTE}; fault: {fault}: {FAULTS[fault][0].__doc__}"
    return trace


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("fault", nargs="?", choices=["good", *FAULTS], default="good")
    parser.add_argument("--write", metavar="DIR", help="write good.json and every fault there")
    args = parser.parse_args(argv)
    if args.write:
        for name in ["good", *FAULTS]:
            trace = good_trace() if name == "good" else faulty_trace(name)
            save_trace(Path(args.write) / f"{name}.json", trace)
        return 0
    trace = good_trace() if args.fault == "good" else faulty_trace(args.fault)
    json.dump(trace, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
