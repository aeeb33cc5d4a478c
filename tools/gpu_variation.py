"""Rewrites fixtures/measurements/gpu-variation/variation.json from the public recordings in
fixtures/measurements/gpu-variation/sources/: how much one figure varies between healthy GPUs of
one node and between repeats on one GPU, as real GPUs recorded it. The coverage campaign draws
its GPU classes' healthy noise from it (rigcheck/testing/coverage/gpu_noise.py).

    python tools/gpu_variation.py            # rewrite the fixture
    python tools/gpu_variation.py --check    # exit 1 if the fixture differs from its sources

Each record keeps the figures as the tool printed them, run by run, GPU by GPU; no figure here is
written by hand. Where a source file was copied by hand (an issue thread), its header says so.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "fixtures" / "measurements" / "gpu-variation"
SOURCES = FOLDER / "sources"
OUT = FOLDER / "variation.json"


def gpu_burn_runs(text: str) -> list[dict[str, float]]:
    """gpu_burn's per-GPU Gflop/s, one run per interval it completed. gpu_burn prints a GPU's
    rate anew when its processed count grows; the first rate of each GPU spans its start-up
    (6,000 against 17,000 Gflop/s in this log), so it is left out."""
    seen: dict[int, list[tuple[int, float]]] = {}
    for snapshot in text.split("proc'd:")[1:]:
        pairs = re.findall(r"(-?\d+) \((\d+) Gflop/s\)", snapshot.split("errors:")[0])
        for gpu, (count, rate) in enumerate(pairs):
            done = seen.setdefault(gpu, [])
            if int(count) > 0 and (not done or done[-1][0] != int(count)):
                done.append((int(count), float(rate)))
    steady = {gpu: [rate for _, rate in done[1:]] for gpu, done in seen.items()}
    depth = max(len(rates) for rates in steady.values())
    return [
        {str(gpu): rates[k] for gpu, rates in steady.items() if len(rates) > k}
        for k in range(depth)
    ]


def p2p_diagonal_runs(text: str) -> list[dict[str, float]]:
    """Each matrix's diagonal (a GPU copying within its own memory), one run per matrix."""
    runs = []
    for block in re.split(r"^\S.*Matrix \(GB/s\)$", text, flags=re.M)[1:]:
        rows = [line.split() for line in block.splitlines() if re.match(r"\s+\d+\s+\d", line)]
        runs.append({row[0]: float(row[1 + int(row[0])]) for row in rows})
    return runs


def tflops_repeats(text: str) -> list[dict[str, float]]:
    """A cuBLASLt sample's repeated timings of one GEMM on one GPU: one run per repeat."""
    return [{"0": float(v)} for v in re.findall(r"([\d.]+) TFlops", text)]


SUPERBENCH = "https://github.com/microsoft/superbenchmark/blob/ff51a3cee9aa986616bfab4071e9f9ccec81b31b/tests/data/gpu_burn.log"
CUDA_TEST = "https://github.com/yqg9651/cuda_test/blob/90c2039ba9f7ae0159091c3db1708c2b03263762/cuBLASLt_h100/0831_trace/"
RECORDS = [
    {
        "id": "a100-gpu-burn",
        "gpu": "NVIDIA A100-SXM4-80GB",
        "kind": "matmul",
        "file": "superbench-gpu_burn-a100.log",
        "read": gpu_burn_runs,
        "unit": "Gflop/s",
        "what": "gpu_burn -tc (DOUBLES on Tensor Cores) on the 8 GPUs of one node, 2022-03-10: "
        "each GPU's rate per interval after its first",
        "source": {
            "url": SUPERBENCH,
            "repo": "microsoft/superbenchmark",
            "path": "tests/data/gpu_burn.log",
            "commit": "ff51a3cee9aa986616bfab4071e9f9ccec81b31b",
        },
    },
    {
        "id": "h100-sxm-p2p-local-copy",
        "gpu": "NVIDIA H100 80GB HBM3 (HGX H100 SXM)",
        "kind": "device",
        "file": "nccl-1264-h100-p2pBandwidthLatencyTest.txt",
        "read": p2p_diagonal_runs,
        "unit": "GB/s",
        "what": "cuda-samples p2pBandwidthLatencyTest on the 8 GPUs of one node: each GPU's copy "
        "within its own memory (the matrices' diagonal), two matrices",
        "source": {
            "url": "https://github.com/NVIDIA/nccl/issues/1264",
            "repo": "NVIDIA/nccl",
            "path": "issue #1264, its first post",
            "commit": None,
        },
    },
    {
        "id": "h100-pcie-cublaslt-fp16",
        "gpu": "NVIDIA H100 PCIe (by its readings in the same run's nvidia-smi log, "
        "0831_trace/fp16_half_random.csv: SM clock at most 1755 MHz, power at most 344 W)",
        "kind": "matmul",
        "file": "cuda_test-h100-fp16_half_random.log",
        "read": tflops_repeats,
        "unit": "TFLOP/s",
        "what": "cuBLASLt LtHSHgemmStridedBatchSimple, 32 x 8192^3 fp16, random data, "
        "50 timed repeats on one GPU, 2023-08-30",
        "source": {
            "url": CUDA_TEST + "fp16_half_random.log",
            "repo": "yqg9651/cuda_test",
            "path": "cuBLASLt_h100/0831_trace/fp16_half_random.log",
            "commit": "90c2039ba9f7ae0159091c3db1708c2b03263762",
        },
    },
    {
        "id": "h100-pcie-cublaslt-fp8",
        "gpu": "NVIDIA H100 PCIe (the same GPU as h100-pcie-cublaslt-fp16)",
        "kind": "matmul",
        "file": "cuda_test-h100-fp8_e4m3_bf16_normal_random.log",
        "read": tflops_repeats,
        "unit": "TFLOP/s",
        "what": "cuBLASLt LtFp8Matmul, 32 x 16384^3 e4m3, random data, 50 timed repeats on "
        "one GPU, 2023-08-30",
        "source": {
            "url": CUDA_TEST + "fp8_e4m3_bf16_normal_random.log",
            "repo": "yqg9651/cuda_test",
            "path": "cuBLASLt_h100/0831_trace/fp8_e4m3_bf16_normal_random.log",
            "commit": "90c2039ba9f7ae0159091c3db1708c2b03263762",
        },
    },
]

H100_SXM = "the H100 SXM's own local copies (8 GPUs, two matrices)"
A100_GEMM = "the A100-SXM4-80GB's gpu_burn GEMM rates (8 GPUs)"
H100_GEMM = "the H100 PCIe's cuBLASLt repeats (fp16 and fp8, 50 each)"
# Which recordings each class's healthy noise is drawn from, and why where it borrows.
CLASSES = {
    "h100": {
        "matmul": {
            "between": ["a100-gpu-burn"],
            "within": ["h100-pcie-cublaslt-fp16", "h100-pcie-cublaslt-fp8"],
            "why": f"repeats: {H100_GEMM} (same GH100 chip; its 350 W cap makes it vary "
            "more than the 700 W SXM, so the spread is if anything wider); between GPUs: "
            f"borrowed from {A100_GEMM}, no per-GPU GEMM figures of one H100 node were "
            "found",
        },
        "device": {
            "between": ["h100-sxm-p2p-local-copy"],
            "within": ["h100-sxm-p2p-local-copy"],
            "why": H100_SXM,
        },
    },
    "a100_40gb": {
        "matmul": {
            "between": ["a100-gpu-burn"],
            "within": ["a100-gpu-burn"],
            "why": f"{A100_GEMM}: the same GA100 chip and clocks as the 40 GB part",
        },
        "device": {
            "between": ["h100-sxm-p2p-local-copy"],
            "within": ["h100-sxm-p2p-local-copy"],
            "why": f"borrowed from {H100_SXM}: no per-GPU local-copy figures of an A100 "
            "node could be read (the A100 p2pBandwidthLatencyTest posts found, "
            "NVIDIA/nccl-tests#100 and LLMServe/DistServe#3, were cut before their "
            "matrices)",
        },
    },
}
# Classes with no recording of their own: they take h100's spread, as the closest recorded GPU.
BORROW = {
    "b200": "no per-GPU or repeated GEMM figures of a B200 were found; h100's spread, the "
    "closest recorded NVIDIA generation",
    "mi300x": "no per-GPU or repeated figures of an MI300X were found; h100's spread, the "
    "recorded GPU of its size",
}


def build() -> dict:
    records = []
    for spec in RECORDS:
        text = (SOURCES / spec["file"]).read_text()
        runs = spec["read"](text)
        if not runs:
            raise SystemExit(f"{spec['file']}: no figures read: the source or its reader changed")
        fields = {k: v for k, v in spec.items() if k != "read"}
        records.append({**fields, "runs": runs})
    classes = dict(CLASSES)
    for cls, why in BORROW.items():
        classes[cls] = {kind: {**pick, "why": f"{why} ({pick['why']})"}
                        for kind, pick in CLASSES["h100"].items()}  # fmt: skip
    return {
        "rigcheck_gpu_variation": 1,
        "note": "written by tools/gpu_variation.py from sources/; each record's runs are the "
        "figures its tool printed, per GPU (the key is the GPU's index in that recording)",
        "records": records,
        "classes": classes,
    }


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--check", action="store_true", help="compare, do not write")
    check = args.parse_args(argv).check
    text = json.dumps(build(), indent=1) + "\n"
    if check:
        same = OUT.exists() and OUT.read_text() == text
        print(f"{OUT.relative_to(ROOT)}: {'matches its sources' if same else 'differs'}")
        return 0 if same else 1
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
