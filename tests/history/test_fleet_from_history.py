"""`rigcheck fleet --from-history`: each node's latest stored run judged together, and
`--reference history`: outliers measured against the fleet's own history, which sees a slowdown
every node shares (a bad image) that a median of today's nodes cannot."""

from __future__ import annotations

import re

import pytest
from history_runs import node_run

from rigcheck.cli import main
from rigcheck.history.run_hook import remember_run
from rigcheck.history.store import open_store

NODES = [f"node-{i:02d}" for i in range(1, 6)]
BEFORE = [f"2026-11-{day:02d}T09:00:00Z" for day in (1, 8, 15)]
TODAY = "2026-11-20T09:00:00Z"


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "220")


def store_fleet(url: str, today_factor: float, slow: str | None = None) -> None:
    """Every node healthy three weeks running; on Nov 20 each at `today_factor` of that, `slow`
    at 70%."""
    for node in NODES:
        for at in BEFORE:
            remember_run(url, *node_run(node, at, {("matmul_bf16_tflops", 0): 900.0}))
        factor = 0.7 if node == slow else today_factor
        today = {("matmul_bf16_tflops", 0): 900.0 * factor}
        remember_run(url, *node_run(node, TODAY, today))


def drained(out: str) -> list[str]:
    return sorted(set(re.findall(r"^  (node-\d\d): ", out, re.MULTILINE)))


def test_the_latest_run_of_each_stored_node_is_judged(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'h.db'}"
    store_fleet(url, 1.0, slow="node-03")
    page = tmp_path / "fleet.html"
    assert main(["fleet", "--from-history", url, "-o", str(page)]) == 1
    out = capsys.readouterr().out
    assert drained(out) == ["node-03"] and "5 nodes" in out
    assert "matmul_bf16_tflops gpu0 630.0 TFLOP/s is 30% below the fleet median 900.0" in out


def test_a_slowdown_every_node_shares_is_seen_only_against_history(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'h.db'}"
    store_fleet(url, 0.85)  # every node 15% slower than its own history, still above its floor
    assert main(["fleet", "--from-history", url, "-o", str(tmp_path / "a.html")]) == 0
    assert drained(capsys.readouterr().out) == []
    args = ["fleet", "--from-history", url, "--reference", "history", "-o", str(tmp_path / "b")]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert drained(out) == NODES
    # Each node's median of (900, 900, 900, 765) is 900: today's 765 is 15% below it.
    assert (
        "node-01: matmul_bf16_tflops gpu0 765.0 TFLOP/s is 15% below the fleet median 900.0" in out
    )
    assert main([*args[:-1], str(tmp_path / "c"), "--band", "20%"]) == 0


def test_an_empty_store_is_bad_input(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'h.db'}"
    open_store(url).dispose()  # a store with its tables and no run (a missing one: no store)
    assert main(["fleet", "--from-history", url, "-o", str(tmp_path / "f.html")]) == 2
    assert "holds no run yet" in capsys.readouterr().err
    assert main(["fleet", "-o", str(tmp_path / "f.html")]) == 2
    assert "or use --from-history" in capsys.readouterr().err
