"""The fleet page past its table and chart limits: a conforming node adds nothing to it, and it
opens in a real headless Chromium with every node to drain, a histogram per figure over every
node and bounded bar charts. (20,000 nodes: benchmarks/bench_fleet.py.)"""

import re
import subprocess
from pathlib import Path

from rigcheck.fleet import page
from rigcheck.fleet.judge import judge_fleet
from rigcheck.fleet.nodes import Node
from rigcheck.fleet.page import render_fleet

SLOW_EVERY = 400  # 1 node in 400 is 30% slow on gpu1: an outlier to drain


def reduced_node(i: int) -> Node:
    """A node as rigcheck.fleet.fields leaves it (the fields the fleet reads), invented figures."""
    wobble = 1 + ((i * 3) % 7 - 3) / 100
    figures = [
        {"figure": figure, "label": f"gpu{gpu}", "unit": unit, "verdict": "pass",
         "measured": value * wobble * (0.7 if gpu == 1 and i % SLOW_EVERY == 7 else 1)}
        for figure, unit, value in (("matmul_bf16_tflops", "TFLOP/s", 700.0),
                                    ("hbm_bandwidth_gbps", "GB/s", 3000.0))
        for gpu in range(2)
    ]  # fmt: skip
    certificate = {
        "verdict": "pass", "partial_reason": None, "class": {"name": "h100"},
        "run": {"id": f"run-{i}", "started_at": "2026-11-20T09:00:00Z"},
        "machine": {"host": {"hostname": f"node{i:05d}"}},
        "checks": [{"name": "test_x", "outcome": "pass", "message": None, "figures": figures}],
    }  # fmt: skip
    return Node(f"node{i:05d}", Path(f"node{i:05d}/certificate.json"), certificate)


def fleet_page(size: int) -> str:
    return render_fleet(judge_fleet([reduced_node(i) for i in range(size)]))


def test_conforming_nodes_add_nothing_past_the_limits():
    small, large = fleet_page(page.TABLE_ROWS + 100), fleet_page(4 * page.TABLE_ROWS)
    drained = len(re.findall(r'<article class="drain"', large))
    assert drained == 4 * page.TABLE_ROWS // SLOW_EVERY  # every node to drain is named
    per_drained = 1_000  # bytes: its entry, its table row and its bar
    assert len(large) - len(small) < per_drained * drained
    assert len(re.findall(r'<svg class="histogram"', large)) == 2


def test_the_page_opens_in_a_browser(chromium, tmp_path):
    file = tmp_path / "fleet.html"
    file.write_text(fleet_page(2 * page.TABLE_ROWS))
    command = [
        chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", file.as_uri(),
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    dom = result.stdout
    assert "3 OF 1000 NODES TO DRAIN" in dom
    assert re.findall(r'data-node="(node\d+)"', dom) == ["node00007", "node00407", "node00807"]
    assert len(re.findall(r'<svg class="histogram"', dom)) == 2
    assert len(re.findall(r"<rect ", dom)) > 4  # the histograms' bins were parsed as SVG
