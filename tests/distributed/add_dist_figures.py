"""One-off: how the multi-GPU figures were added to expected/<class>.json (kept for provenance).

Adds only `allreduce_busbw_gbps` and `p2p_unidir_gbps` to each class's "figures", as text
inserted before the object's closing brace, so every other byte of the file stays as it was;
refuses to touch a file that already has one of the keys.

    python tests/distributed/add_dist_figures.py [--expected-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

EXPECTED = Path(__file__).resolve().parents[2] / "expected"
# It first cited the developers' notes, outside this repository; each figure's public source now
# stands in expected/<class>.json, which tests/spec/test_provenance.py checks.
HW = "public reports (each figure's source: expected/<class>.json)"
POLICY_ACH = (
    "rigcheck floor policy: 0.8 x achievable ({ach}), rounded down to 3 significant figures"
)
POLICY_DS = (
    "rigcheck floor policy: no achievable figure, so 0.5 x datasheet ({ds}), rounded down to 3 "
    "significant figures, until calibrated on a real machine"
)
BUSBW_DEFINITION = (
    "NCCL (RCCL on ROCm) all-reduce, sum, float32, in place, over all 8 GPUs of one node (one "
    "process per GPU under torchrun), 8 GiB buffer: bus bandwidth = algbw x 2(n-1)/n, algbw = "
    "bytes / time (nccl-tests doc/PERFORMANCE.md); median of 5 timed iterations after 2 "
    "warm-ups, time averaged over the ranks; gated at this one size, never a sweep average. "
    "Whether NVLS (NVLink SHARP) was used is recorded with the result."
)
BUSBW_NO_DATASHEET = (
    "no datasheet states an all-reduce bus bandwidth: the link's per-direction rate bounds a "
    "ring, and NVLS (reduction in the NVSwitch) goes past it"
)
P2P_DEFINITION = (
    "GPU-to-GPU copy through the copy engines (torch Tensor.copy_ between two GPUs of one node: "
    "cudaMemcpyAsync with peer access, as p2pBandwidthLatencyTest and nvbandwidth), 512 MiB "
    "buffers, bytes / median time of 5 copies after 2 warm-ups, one direction (the slower of "
    "the two per pair), data verified. The figure judges the median over the node's GPU pairs; "
    "a single slow pair is test_no_slow_gpu_pair's. Datasheet tier: the link's per-direction "
    "rate (bidirectional total / 2)."
)


def tier(value: float, source: str) -> dict:
    return {"value": value, "source": source}


def busbw(achievable: float, floor: float, source: str, extra: str = "") -> dict:
    return {
        "unit": "GB/s",
        "definition": BUSBW_DEFINITION,
        "datasheet": None,
        "achievable": tier(achievable, source),
        "floor": tier(floor, POLICY_ACH.format(ach=achievable) + extra),
        "unknown_reason": BUSBW_NO_DATASHEET,
        "warn_band": 0.1,
    }


def p2p(datasheet: float, link: str, achievable: float | None = None, source: str = "") -> dict:
    entry = {
        "unit": "GB/s",
        "definition": P2P_DEFINITION,
        "datasheet": tier(datasheet, link),
        "achievable": tier(achievable, source) if achievable else None,
    }
    if achievable:
        entry["floor"] = tier(round_down(0.8 * achievable), POLICY_ACH.format(ach=achievable))
    else:
        entry["floor"] = tier(round_down(0.5 * datasheet), POLICY_DS.format(ds=datasheet))
        entry["unknown_reason"] = (
            "no public per-pair copy measurement was found for this class; the floor falls back "
            "to 0.5 x datasheet until one is taken on a real machine"
        )
    entry["warn_band"] = 0.1
    return entry


def round_down(x: float) -> float:
    """To 3 significant figures, downwards (the spec files' floor policy)."""
    import math

    step = 10 ** (math.floor(math.log10(x)) - 2)
    return round(math.floor(x / step + 1e-9) * step, 6)


NCCL_1264 = (
    "NVIDIA/nccl#1264: cuda-samples p2pBandwidthLatencyTest on HGX H100 SXM, unidirectional "
    "P2P ~380 GB/s of 450 (749 of 900 bidirectional); stas00 measured 376"
)
FIGURES = {
    "a100": {
        "allreduce_busbw_gbps": busbw(
            235.7,
            188,
            f"{HW}: 8x A100 SXM 80GB all-reduce busbw 235.7 GB/s at 8-16 GiB "
            "(stas00/ml-engineering network/benchmarks)",
            ". Cross-check: a cloud's health check gates 8x A100 at 228 GB/s "
            "(Azure/azurehpc-health-checks conf)",
        ),
        "p2p_unidir_gbps": p2p(300, "A100 datasheet: NVLink 3, 600 GB/s bidirectional (12 links)"),
    },
    "h100": {
        "allreduce_busbw_gbps": busbw(
            480,
            384,
            f"{HW}: 8x H100 SXM ~480 GB/s with NVLS, ~370 ring only (NVIDIA/nccl-tests#212, "
            "maintainer on H100 busbw and NVLS)",
            ". Assumes NVLS: a ring-only run (~370, NCCL_ALGO=Ring or NCCL_NVLS_ENABLE=0) falls "
            "below it, and the failure says so. Cross-check: a cloud gates at 460 GB/s",
        ),
        "p2p_unidir_gbps": p2p(
            450, "H100 datasheet: NVLink 4, 900 GB/s bidirectional (18 links)", 380, NCCL_1264
        ),
    },
    "h200": {
        "allreduce_busbw_gbps": busbw(
            473.1,
            378,
            f"{HW}: 8x H200 473.1 GB/s with NVLS, 365.6 ring only",
            ". Assumes NVLS, as for h100. Cross-check: a cloud gates at 431 GB/s",
        ),
        "p2p_unidir_gbps": p2p(
            450,
            "H200 datasheet: NVLink 4, 900 GB/s bidirectional (18 links)",
            380,
            f"proxy: the H100's figure (same NVLink 4 x 18 and NVSwitch): {NCCL_1264}",
        ),
    },
    "b200": {
        "allreduce_busbw_gbps": busbw(845.7, 676, f"{HW}: 8x B200 all-reduce busbw 845.7 GB/s"),
        "p2p_unidir_gbps": p2p(900, "HGX B200: NVLink 5, 1.8 TB/s bidirectional (18 links)"),
    },
    "mi300x": {
        "allreduce_busbw_gbps": busbw(
            304,
            243,
            "AMD validation guide bar as ROCm/cvs encodes it "
            "(cvs/input/config_file/rccl/mi300x_rccl_single_node_config.json): single-node 8-GPU "
            "RCCL all_reduce bus bandwidth >= 304 GB/s at 8 GiB, in place, float; a bar healthy "
            "nodes clear, so a lower bound of what they reach",
            f". {HW} quotes an RCCL floor of 314 from another ROCm/cvs config",
        ),
        "p2p_unidir_gbps": p2p(
            64, "MI300X datasheet: Infinity Fabric 128 GB/s per link, both directions"
        ),
    },
    "l40s": {
        "allreduce_busbw_gbps": {
            "unit": "GB/s",
            "definition": BUSBW_DEFINITION,
            "datasheet": None,
            "achievable": None,
            "floor": None,
            "unknown_reason": (
                "no public reference for 8x L40S all-reduce over PCIe; the check "
                "fails closed until a floor is measured on a healthy node of this class"
            ),
        },
        "p2p_unidir_gbps": p2p(
            31.5, "PCIe Gen4 x16 (L40S datasheet): 16 GT/s x 16 lanes x 128b/130b per direction"
        ),
    },
    "cpu": {
        "allreduce_busbw_gbps": {
            "unit": "GB/s",
            "definition": (
                "gloo all-reduce, sum, float32, in place, 2 processes on one host (torchrun), "
                "64 MiB buffer: bus bandwidth = algbw x 2(n-1)/n (= algbw for n = 2), algbw = "
                "bytes / time; median of 10 timed iterations after 2 warm-ups, averaged over "
                "the ranks. It proves the torch.distributed path works end to end; it says "
                "little about the host"
            ),
            "datasheet": None,
            "achievable": tier(
                0.5,
                "rigcheck: the slowest of 22 runs on the project's CI-class machine (2 cores "
                "shared with other jobs, load average 4-4.8): 0.50-1.07 GB/s. Set low on "
                "purpose: a noisy shared 2-core machine must not fail this",
            ),
            "floor": tier(0.4, POLICY_ACH.format(ach=0.5)),
            "unknown_reason": "a CPU host has no datasheet interconnect figure",
            "warn_band": 0.1,
        }
    },
}


def insert_figures(text: str, figures: dict) -> str:
    """`text` with `figures` added at the end of its "figures" object, nothing else changed."""
    data = json.loads(text)
    clash = set(figures) & set(data["figures"])
    if clash:
        raise SystemExit(f"already has {sorted(clash)}: not touching it")
    if list(data)[-1] != "figures":
        raise SystemExit('"figures" is not the last key: the insertion point is not certain')
    block = ",\n".join(
        f'    "{key}": ' + json.dumps(value, indent=2).replace("\n", "\n    ")
        for key, value in figures.items()
    )
    body, tail = text.rstrip().removesuffix("}").rstrip(), "\n}\n"
    if body.endswith("{}"):
        new = body[:-2] + "{\n" + block + "\n  }" + tail
    else:
        assert body.endswith("}"), "figures object does not end where expected"
        new = body[:-1].rstrip() + ",\n" + block + "\n  }" + tail
    data["figures"].update(figures)
    if json.loads(new) != data:
        raise SystemExit("the insertion changed something else")
    return new


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--expected-dir", type=Path, default=EXPECTED)
    args = parser.parse_args(argv)
    for name, figures in FIGURES.items():
        path = args.expected_dir / f"{name}.json"
        path.write_text(insert_figures(path.read_text(), figures))
        print(f"{path}: added {', '.join(figures)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
