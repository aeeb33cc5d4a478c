"""Which node or link a node-pair run blames: the judge alone (fast), and replayed run folders
judged by suites/distributed/test_node_pairs.py (a slow node, a slow link, all good)."""

import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pair_runs import slow_node, write_pair_run

from rigcheck.distributed.pair_schedule import pair_schedule
from rigcheck.distributed.pair_verdict import (
    PairResult,
    PairRunError,
    judge_pairs,
    load_pair_run,
)
from rigcheck.fleet.judge import judge_fleet
from rigcheck.fleet.nodes import load_nodes

BAND = 0.10
ONLY = ("-k", "(node_pair or node_or_link) and not rdma")  # the NCCL pair checks, not the RDMA ones
CHECK = "test_no_slow_node_or_link"
MEASURED = "test_every_node_pair_measured"
# Recorded facts: no live probe of this machine, which the pair checks do not read.
CPU_FACTS = Path(__file__).resolve().parents[2] / "fixtures/snapshots/cpu.json"
FACTS = f"--facts={CPU_FACTS}"


def results(nodes, rates, rounds=None, rate=40.0):
    return [
        PairResult(r.index, pair, rates.get(pair, rate))
        for r in pair_schedule(nodes, rounds)
        for pair in r.pairs
    ]


@given(st.integers(2, 24), st.data())
def test_a_healthy_fleet_within_the_band_names_nothing(nodes, data):
    """Never cry wolf: pairs that differ by less than the band from each other all pass."""
    rates = {
        r.pairs[i]: data.draw(st.floats(36.5, 40.0))
        for r in pair_schedule(nodes)
        for i in range(len(r.pairs))
    }
    verdict = judge_pairs(results(nodes, rates), BAND)
    assert verdict.ok and not verdict.slow_nodes and not verdict.slow_links


@given(st.integers(3, 24), st.data())
def test_a_slow_node_is_named_and_only_it(nodes, data):
    bad = data.draw(st.integers(0, nodes - 1))
    factor = data.draw(st.floats(0.1, 0.85))
    verdict = judge_pairs(results(nodes, slow_node(nodes, bad, slow=40.0 * factor)), BAND)
    assert list(verdict.slow_nodes) == [bad]
    assert not verdict.slow_links and not verdict.undecided


@given(st.integers(4, 24), st.data())
def test_a_slow_link_is_named_and_no_node(nodes, data):
    a = data.draw(st.integers(0, nodes - 2))
    b = data.draw(st.integers(a + 1, nodes - 1))
    verdict = judge_pairs(results(nodes, {(a, b): 25.0}), BAND)
    assert [p.nodes for p in verdict.slow_links] == [(a, b)]
    assert not verdict.slow_nodes and not verdict.undecided


def test_two_nodes_cannot_tell_node_from_link():
    verdict = judge_pairs([PairResult(1, (0, 1), 10.0)], BAND, floor=30.0)
    assert [p.nodes for p in verdict.undecided] == [(0, 1)] and not verdict.slow_nodes


def test_the_class_floor_judges_when_it_is_stricter():
    verdict = judge_pairs(results(4, {}), BAND, floor=45.0)
    assert len(verdict.slow_pairs) == 6 and list(verdict.slow_nodes) == [0, 1, 2, 3]
    assert "class floor 45.00" in verdict.why


def test_one_bad_node_of_four_does_not_drag_the_reference_down():
    verdict = judge_pairs(results(4, slow_node(4, 2, slow=5.0)), BAND)
    assert verdict.reference_gbps == 40.0 and list(verdict.slow_nodes) == [2]


def test_a_run_folder_reads_back(tmp_path):
    run = load_pair_run(write_pair_run(tmp_path, 5, drop=((1, 4),)))
    assert len(run.results()) == 9 and run.name(3) == "gpu-node-03"
    assert run.missing() == [
        "round 1 gpu-node-01 <-> gpu-node-04: no result (round01.node1-node4.json)"
    ]


def test_a_damaged_result_is_named(tmp_path):
    write_pair_run(tmp_path, 4)
    file = tmp_path / "pairs" / "round02.node0-node2.json"
    file.write_text(json.dumps({**json.loads(file.read_text()), "busbw_gbps": "fast"}))
    with pytest.raises(PairRunError, match=r"round02.node0-node2.json: 'busbw_gbps' is 'fast'"):
        load_pair_run(tmp_path)


def test_files_of_another_run_are_refused(tmp_path):
    write_pair_run(tmp_path, 4)
    plan = json.loads((tmp_path / "plan.json").read_text())
    (tmp_path / "plan.json").write_text(json.dumps({**plan, "run_id": "other"}))
    with pytest.raises(PairRunError, match="give each run its own --report-dir"):
        load_pair_run(tmp_path)
    with pytest.raises(PairRunError, match=r"no plan\.json"):
        load_pair_run(tmp_path / "pairs")


def test_replay_slow_node(run_suite, tmp_path):
    write_pair_run(tmp_path, 6, rates=slow_node(6, 4, slow=21.5))
    result = replay_pairs(run_suite, tmp_path)
    assert result.failed().keys() == {CHECK}, result.describe()
    message = result.messages[CHECK]
    assert "slow node gpu-node-04: slow with all 5 partners" in message
    assert (
        "slow link gpu" not in message and "more than 10% below the fleet's 40.00 GB/s" in message
    )


def test_replay_slow_link(run_suite, tmp_path):
    write_pair_run(tmp_path, 6, rates={(1, 3): 30.0})
    result = replay_pairs(run_suite, tmp_path)
    assert result.failed().keys() == {CHECK}, result.describe()
    message = result.messages[CHECK]
    assert "slow link gpu-node-01 <-> gpu-node-03 (round" in message
    assert "slow node gpu" not in message


def replay_pairs(run_suite, folder):
    return run_suite("-m", "cpu and distributed", FACTS, f"--node-pairs={folder}", *ONLY)


def test_on_one_of_the_nodes_only_what_involves_it_fails(run_suite, tmp_path):
    """Each node's certificate names itself or nothing: `rigcheck fleet` drains the slow node."""
    folder = write_pair_run(tmp_path / "run", 6, rates={**slow_node(6, 4), (0, 1): 30.0})
    cpu = json.loads(CPU_FACTS.read_text())
    outcomes = {}
    for host in ("gpu-node-04", "gpu-node-01", "gpu-node-02"):
        facts = tmp_path / f"{host}.json"
        facts.write_text(json.dumps({**cpu, "host": {**cpu["host"], "hostname": host}}))
        result = run_suite(
            "-m", "cpu and distributed", f"--facts={facts}", f"--node-pairs={folder}", *ONLY
        )
        outcomes[host] = result.outcomes[CHECK]
        message = result.messages.get(CHECK, "")
        if host == "gpu-node-04":
            assert "slow node gpu-node-04" in message and "slow link gpu" not in message, message
        if host == "gpu-node-01":
            assert "slow link gpu-node-00 <-> gpu-node-01" in message
            assert "slow node gpu" not in message, message
    assert outcomes == {"gpu-node-04": "failed", "gpu-node-01": "failed", "gpu-node-02": "passed"}
    # The three nodes' certificates through `rigcheck fleet`'s judge: the two to drain, and why.
    fleet = judge_fleet(load_nodes([os.environ["RIGCHECK_REPORT_DIR"]]))
    assert sorted(fleet.drain) == ["gpu-node-01", "gpu-node-04"], fleet.drain
    assert "slow node gpu-node-04" in fleet.drain["gpu-node-04"][0]


def test_replay_all_good_and_a_missing_pair(run_suite, tmp_path):
    result = replay_pairs(run_suite, write_pair_run(tmp_path / "good", 5))
    assert result.outcomes == {MEASURED: "passed", CHECK: "passed"}, result.describe()
    result = replay_pairs(run_suite, write_pair_run(tmp_path / "short", 5, drop=((0, 2),)))
    assert result.failed().keys() == {MEASURED}, result.describe()
    assert "gpu-node-00 <-> gpu-node-02: no result" in result.messages[MEASURED]


def test_without_a_pair_run_the_checks_skip_saying_how(run_suite):
    result = run_suite("-m", "cpu and distributed", FACTS, *ONLY)
    assert set(result.outcomes.values()) == {"skipped"}, result.describe()
    assert "--node-pairs=DIR" in result.messages[CHECK]
