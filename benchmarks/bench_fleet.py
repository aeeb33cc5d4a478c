"""`rigcheck fleet DIR` on 1,000, 4,000 and 20,000 nodes: each node's certificate is the real
8-GPU quick-tier one (data/h100-quick-certificate.json, 150 KB) under the node's name, with one
throughput check of 16 figures added (2 per GPU; healthy spread of +-3%, 1 node in 500 slow, 1
in 1,000 failing). Files are written once into $RIGCHECK_BENCH_DIR (default /tmp/rigcheck-bench);
20,000 nodes is 1.9 GB there and runs only with RIGCHECK_BENCH_FLEET_20K=1. Each size is timed
as a user runs it (its own process, peak resident memory of it and its workers), and its page is
then opened in headless Chromium."""

from __future__ import annotations

import contextlib
import copy
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from bench_history import FOLDER

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


def fleet_process(folder: Path, page: Path) -> tuple[int, float, float]:
    """`rigcheck fleet` as a user runs it, in its own process: its exit status, the peak of its
    and its worker processes' resident memory summed (sampled every 50 ms; pages the workers share
    with their parent are counted twice, so this overstates), and their CPU seconds (the figure
    that holds on a box shared with other work)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    argv = [sys.executable, "-m", "rigcheck", "fleet", str(folder), "-o", str(page), "--force"]
    process = psutil.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    while process.poll() is None:
        with contextlib.suppress(psutil.Error):
            tree = [process, *process.children(recursive=True)]
            peak = max(peak, sum(p.memory_info().rss for p in tree))
        time.sleep(0.05)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return process.returncode, peak / 2**20, cpu


def open_in_chromium(page: Path, profile: Path) -> float:
    """Seconds headless Chromium takes to load the page and print its DOM (which must hold the
    verdict: the page was parsed, not only fetched)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("headless Chromium not installed")
    start = time.perf_counter()
    dom = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=600, check=True,
    ).stdout  # fmt: skip
    assert "NODES TO DRAIN" in dom and '<svg class="histogram"' in dom
    return time.perf_counter() - start


@pytest.mark.parametrize("size", SIZES)
def test_fleet(benchmark, size, tmp_path):
    folder = fleet_folder(size)
    page = tmp_path / "fleet.html"
    benchmark.group = "fleet DIR (nodes)"
    status, peak, cpu = benchmark.pedantic(fleet_process, (folder, page), rounds=1, iterations=1)
    assert status == 1
    benchmark.extra_info["cpu_s"] = round(cpu, 1)
    benchmark.extra_info["peak_rss_mib"] = round(peak)
    benchmark.extra_info["page_mb"] = round(page.stat().st_size / 1e6, 2)
    benchmark.extra_info["chromium_s"] = round(open_in_chromium(page, tmp_path / "profile"), 1)
    print(f"\n{size} nodes: {benchmark.extra_info}")
