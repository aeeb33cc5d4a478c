"""`rigcheck fleet DIR` on 1,000, 4,000 and 20,000 nodes: each node's certificate is the real
8-GPU quick-tier one (data/h100-quick-certificate.json, 150 KB) under the node's name, with one
throughput check of 16 figures added (2 per GPU; healthy spread of +-3%, 1 node in 500 slow, 1
in 1,000 failing). Files are written once into $RIGCHECK_BENCH_DIR (default /tmp/rigcheck-bench);
20,000 nodes is 3 GB there and runs only with RIGCHECK_BENCH_FLEET_20K=1."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest
from bench_history import FOLDER, quiet
from scaling import peak_mib

SIZES = (1_000, 4_000, *((20_000,) if os.environ.get("RIGCHECK_BENCH_FLEET_20K") else ()))
CERTIFICATE = Path(__file__).with_name("data") / "h100-quick-certificate.json"
FIGURES = {"matmul_bf16_tflops": ("TFLOP/s", 700.0), "hbm_bandwidth_gbps": ("GB/s", 3000.0)}


def throughput_check(i: int) -> dict:
    wobble = 1 + ((i * 3) % 7 - 3) / 100
    slow = 0.7 if i % 500 == 499 else 1.0
    entries = [
        {"label": f"gpu{g}", "figure": figure, "measured": value * wobble * (slow if g == 3 else 1),
         "unit": unit, "verdict": "pass", "reason": "", "definition": None, "sources": {}}
        for g in range(8)
        for figure, (unit, value) in FIGURES.items()
    ]  # fmt: skip
    return {"id": "suites/perf/test_throughput.py::test_x", "name": "test_x", "area": "perf",
            "file": "suites/perf/test_throughput.py", "line": 1, "outcome": "pass",
            "phase": None, "message": None, "detail": None, "duration_s": 1.0, "warnings": [],
            "figures": entries}  # fmt: skip


def fleet_folder(size: int) -> Path:
    folder = FOLDER / f"fleet-{size}"
    if (folder / "done").exists():
        return folder
    base = json.loads(CERTIFICATE.read_text())
    for i in range(size):
        node = copy.deepcopy(base)
        node["machine"]["host"]["hostname"] = name = f"gpu-node-{i:05d}"
        node["checks"].append(throughput_check(i))
        if i % 1000 == 999:
            node["verdict"] = "fail"
            node["checks"][0].update(outcome="fail", message="Xid 79 on GPU 3")
        (folder / name).mkdir(parents=True, exist_ok=True)
        (folder / name / "certificate.json").write_text(json.dumps(node))
    (folder / "done").write_text("")
    return folder


@pytest.mark.parametrize("size", SIZES)
def test_fleet(benchmark, size, tmp_path):
    folder = fleet_folder(size)
    page = tmp_path / "fleet.html"
    argv = ("fleet", str(folder), "-o", str(page), "--force")
    benchmark.group = "fleet DIR (nodes)"
    benchmark.extra_info["peak_mib"] = peak_mib(lambda: quiet(*argv))
    assert benchmark.pedantic(quiet, args=argv, rounds=1, iterations=1) == 1
    benchmark.extra_info["page_mb"] = round(page.stat().st_size / 1e6, 2)
    print(f"\n{size} nodes: page {benchmark.extra_info['page_mb']} MB")
