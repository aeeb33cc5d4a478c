"""Issue 38: the history keeps the machine's evidence only. Before, every replayed fixture was
stored against its serials (all synthetic snapshots carry serial 1650000000001...), and a wrong
class, a --gpus miscount or a missing replayed figure left the boards "seen failing" ever
after. Runs written through remember_run into SQLite, read back with the store's own query."""

from __future__ import annotations

import pytest
from history_runs import SERIALS, node_run

from rigcheck.history import store
from rigcheck.history.run_hook import board_evidence, remember_run

FAILED_ON_GPU1 = "GPU 1 (0000:28:00.0): "


def failing_run(kind: str, name: str = "test_no_machine_fault_xids", message: str = "") -> tuple:
    """node-17's run whose GPU 1 failed `name`, from facts of this origin kind."""
    certificate, facts = node_run("node-17", "2026-11-02T10:00:00Z", xid_on_gpu1=True)
    for check in certificate["checks"]:
        if check["outcome"] == "fail":
            check["name"] = name
            check["message"] = (message or check["message"]).replace("GPU 1 ", FAILED_ON_GPU1, 1)
    facts["origin"] = certificate["machine"]["origin"] = {"kind": kind}
    return certificate, facts


def seen(url: str) -> dict:
    engine = store.open_store(url)
    try:
        return store.failing_sightings(engine, [store.rows.board_key(s) for s in SERIALS])
    finally:
        engine.dispose()


def test_a_live_failure_of_a_board_is_kept_against_it(url):
    remember_run(url, *failing_run("live"))
    assert len(seen(url)) == 1


@pytest.mark.parametrize(
    ("kind", "chosen", "why"),
    [
        ("synthetic", True, "synthetic facts: their serials are made up"),
        ("recorded", False, "replayed facts (recorded): kept against their GPUs only with"),
    ],
)
def test_replayed_and_synthetic_boards_are_not_kept(url, monkeypatch, kind, chosen, why):
    monkeypatch.setenv("RIGCHECK_HISTORY", url)
    certificate, facts = failing_run(kind)
    kept, said = board_evidence(url if chosen else None, certificate, facts)
    assert kept["devices"] == [] and said.startswith(why)
    remember_run(url if chosen else None, certificate, facts)
    assert seen(url) == {}
    assert store.load_runs(store.open_store(url), node="node-17")  # the node's run is kept


def test_a_recorded_snapshot_is_kept_against_its_boards_when_asked(url):
    remember_run(url, *failing_run("recorded"))
    assert len(seen(url)) == 1


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("test_product_matches_class", "this machine is not a a100: GPU 1 is an H100"),
        ("test_device_count", "--gpus 8 asked for 8 GPUs, GPU 1 is the last of 2"),
        ("test_matmul_tflops[GPU1-bf16]", "no recorded measurement of matmul_bf16 for GPU 1"),
    ],
)
def test_failures_that_are_not_the_boards_do_not_mark_them(url, name, message):
    certificate, facts = failing_run("live", name, message)
    kept, said = board_evidence(url, certificate, facts)
    assert kept["devices"] == [] and said == f"{name} failed, which is not the boards' fault"
    remember_run(url, certificate, facts)
    assert seen(url) == {}
