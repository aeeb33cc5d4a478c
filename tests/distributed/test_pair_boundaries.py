"""The node-pair judge and its suite checks called directly, at the edges the replays do not
reach: the exact messages of a damaged run folder, a pair whose run failed, the undecided pair,
the class floor, the recorded rates, a run with no result, and the warning about other nodes.
(issue 18: these decide the node-pairs area's mutants in microseconds a case.)"""

import importlib
import json
import warnings
from types import SimpleNamespace

import pytest
from pair_runs import RUN_ID, slow_node, write_pair_run

from rigcheck.distributed.pair_verdict import (
    PAIR_SCHEMA,
    PLAN_SCHEMA,
    PairResult,
    PairRunError,
    judge_pairs,
    load_pair_run,
)

suite = importlib.import_module("suites.distributed.test_node_pairs")
DAMAGED = "the file is damaged or not written by rigcheck.distributed.pair_worker"
NO_SPEC = SimpleNamespace(figures={})


def facts_of(host: str | None) -> SimpleNamespace:
    return SimpleNamespace(find=lambda path: host if path == "host.hostname" else None)


def rewrite(file, **changes) -> None:
    file.write_text(json.dumps({**json.loads(file.read_text()), **changes}))


@pytest.mark.parametrize(
    ("key", "value", "kind"), [("nodes", "all", "list"), ("rounds", None, "list")]
)
def test_a_damaged_plan_names_the_field_and_its_kind(tmp_path, key, value, kind) -> None:
    write_pair_run(tmp_path, 4)
    rewrite(tmp_path / "plan.json", **{key: value})
    with pytest.raises(PairRunError) as refused:
        load_pair_run(tmp_path)
    assert str(refused.value) == (
        f"{tmp_path / 'plan.json'}: '{key}' is {value!r}, not a {kind}: {DAMAGED}"
    )


@pytest.mark.parametrize(
    ("key", "value", "kind"), [("round", "2", "int"), ("busbw_gbps", True, "number")]
)
def test_a_damaged_result_names_the_field_and_its_kind(tmp_path, key, value, kind) -> None:
    write_pair_run(tmp_path, 4)
    file = tmp_path / "pairs" / "round02.node0-node2.json"
    rewrite(file, **{key: value})
    with pytest.raises(PairRunError) as refused:
        load_pair_run(tmp_path)
    assert str(refused.value) == f"{file}: '{key}' is {value!r}, not a {kind}: {DAMAGED}"


def test_a_plan_of_another_schema_is_refused_naming_it(tmp_path) -> None:
    write_pair_run(tmp_path, 4)
    rewrite(tmp_path / "plan.json", schema="rigcheck.node-pairs-plan/0")
    with pytest.raises(PairRunError) as refused:
        load_pair_run(tmp_path)
    assert str(refused.value) == (
        f"{tmp_path / 'plan.json'}: not a {PLAN_SCHEMA} file (schema rigcheck.node-pairs-plan/0)"
    )


def test_a_result_of_another_run_names_this_run(tmp_path) -> None:
    write_pair_run(tmp_path, 4)
    file = tmp_path / "pairs" / "round01.node0-node3.json"
    rewrite(file, run_id="another-run")
    with pytest.raises(PairRunError) as refused:
        load_pair_run(tmp_path)
    assert str(refused.value) == (
        f"{file}: not a result of the run in {tmp_path / 'plan.json'} (run {RUN_ID}): "
        "give each run its own --report-dir"
    )
    rewrite(file, run_id=RUN_ID, schema="rigcheck.node-pair/0")
    with pytest.raises(PairRunError, match="not a result of the run"):
        load_pair_run(tmp_path)
    rewrite(file, schema=PAIR_SCHEMA)
    assert len(load_pair_run(tmp_path).results()) == 6


def test_a_pair_that_failed_or_summed_wrong_is_missing_and_not_judged(tmp_path) -> None:
    write_pair_run(tmp_path, 4)
    rewrite(tmp_path / "pairs" / "round01.node1-node2.json", error="NCCL timeout", busbw_gbps=0.0)
    rewrite(tmp_path / "pairs" / "round02.node0-node2.json", verified=False)
    run = load_pair_run(tmp_path)
    assert run.missing() == [
        "round 1 gpu-node-01 <-> gpu-node-02: NCCL timeout",
        "round 2 gpu-node-00 <-> gpu-node-02: the all-reduce gave a wrong sum",
    ]
    assert [r.nodes for r in run.results()] == [(0, 3), (0, 2), (1, 3), (0, 1), (2, 3)]
    with pytest.raises(AssertionError) as failed:
        suite.test_every_node_pair_measured(run)
    # one pair a line (pytest's assertion rewriting indents the lines of a message: compare words)
    lines = str(failed.value).splitlines()
    assert [" ".join(line.split()) for line in lines[:4]] == [
        f"node pairs without a good result in {tmp_path}:",
        "round 1 gpu-node-01 <-> gpu-node-02: NCCL timeout",
        "round 2 gpu-node-00 <-> gpu-node-02: the all-reduce gave a wrong sum",
        "A pair that never finished: its job's log (torchrun) names the rank that failed.",
    ]


def test_a_run_without_any_result_cannot_be_checked(tmp_path) -> None:
    write_pair_run(tmp_path, 2, drop=((0, 1),))
    run = load_pair_run(tmp_path)
    with pytest.raises(pytest.fail.Exception) as failed:
        suite.test_no_slow_node_or_link(run, NO_SPEC, facts_of(None), lambda *a: None)
    assert failed.value.msg == f"cannot check: no pair result in {tmp_path}"
    assert failed.value.pytrace is False


def test_a_slow_pair_whose_node_met_no_other_partner_is_undecided(tmp_path) -> None:
    run = load_pair_run(write_pair_run(tmp_path, 4, rounds=1, rates={(1, 2): 20.0}))
    verdict = judge_pairs(run.results(), 0.10)
    assert suite.findings(run, verdict) == [
        (
            {1, 2},
            "slow pair gpu-node-01 <-> gpu-node-02 (round 1): 20.00 GB/s; a node in it met no "
            "other partner, so node and link cannot be told apart: run more rounds (--rounds)",
        )
    ]


def test_the_class_floor_judges_and_the_rates_are_recorded(tmp_path) -> None:
    run = load_pair_run(write_pair_run(tmp_path, 2, rate=40.12345))
    recorded = {}
    floor = SimpleNamespace(figures={suite.FIGURE: {"floor": {"value": 45.0}}})
    with pytest.raises(AssertionError) as failed:
        suite.test_no_slow_node_or_link(run, floor, facts_of(None), recorded.__setitem__)
    assert "under the class floor 45.00 GB/s" in str(failed.value)
    assert "threshold 45.00 GB/s" in str(failed.value)
    assert recorded == {suite.FIGURE: {"round 1 gpu-node-00 <-> gpu-node-01": 40.123}}
    with pytest.raises(pytest.skip.Exception, match="two nodes make one pair"):
        suite.test_no_slow_node_or_link(run, NO_SPEC, facts_of(None), recorded.__setitem__)


def test_a_node_not_involved_warns_about_the_others_and_passes(tmp_path) -> None:
    rates = {**slow_node(6, 4), (0, 1): 30.0}
    run = load_pair_run(write_pair_run(tmp_path, 6, rates=rates))
    with pytest.warns(UserWarning) as caught:
        suite.test_no_slow_node_or_link(run, NO_SPEC, facts_of("gpu-node-02"), lambda *a: None)
    (warning,) = caught
    assert str(warning.message).startswith(
        "other nodes' pairs: slow node gpu-node-04: slow with all 5 partners ("
    )
    assert "GB/s); slow link gpu-node-00 <-> gpu-node-01 (round " in str(warning.message)
    # On a slow node only what involves it fails; the other finding is a warning.
    with warnings.catch_warnings(record=True) as others, pytest.raises(AssertionError) as failed:
        warnings.simplefilter("always")
        suite.test_no_slow_node_or_link(run, NO_SPEC, facts_of("gpu-node-04"), lambda *a: None)
    assert "slow node gpu-node-04" in str(failed.value)
    assert "slow link" not in str(failed.value).split(". Slow = ")[0]
    assert [str(w.message).split(". Slow")[0] for w in others] == [
        "other nodes' pairs: slow link gpu-node-00 <-> gpu-node-01 (round 5): 30.00 GB/s, "
        "while both nodes are fast with their other partners"
    ]


def test_an_unreadable_plan_says_so(tmp_path) -> None:
    write_pair_run(tmp_path, 2)
    (tmp_path / "plan.json").write_text("{not json")
    with pytest.raises(PairRunError) as refused:
        load_pair_run(tmp_path)
    assert str(refused.value).startswith(f"{tmp_path / 'plan.json'}: cannot read it: Expecting")


def test_a_floor_equal_to_the_band_s_threshold_is_named_as_the_band() -> None:
    results = [PairResult(1, (0, 1), 40.0), PairResult(2, (0, 2), 40.0)]
    band_only = judge_pairs(results, 0.10)
    same = judge_pairs(results, 0.10, band_only.threshold_gbps)
    assert same.why == band_only.why == "more than 10% below the fleet's 40.00 GB/s"


def test_a_pair_exactly_at_the_threshold_is_not_slow() -> None:
    results = [PairResult(1, (0, 1), 30.0), PairResult(2, (1, 2), 30.0)]
    verdict = judge_pairs(results, 0.10, 30.0)
    assert verdict.threshold_gbps == 30.0 and verdict.ok and verdict.slow_pairs == []


def test_on_a_head_node_every_finding_fails_each_named_in_full(tmp_path) -> None:
    rates = {**slow_node(6, 3), (0, 1): 30.0}
    run = load_pair_run(write_pair_run(tmp_path, 6, rates=rates))
    with warnings.catch_warnings(record=True) as caught, pytest.raises(AssertionError) as failed:
        warnings.simplefilter("always")
        suite.test_no_slow_node_or_link(run, NO_SPEC, facts_of(None), lambda *a: None)
    assert caught == []
    assert str(failed.value).startswith(
        "node-pair all-reduce bus bandwidth: slow node gpu-node-03: slow with all 5 partners "
        "(gpu-node-00 <-> gpu-node-03 20.00, gpu-node-01 <-> gpu-node-03 20.00, "
        "gpu-node-02 <-> gpu-node-03 20.00, gpu-node-03 <-> gpu-node-04 20.00, "
        "gpu-node-03 <-> gpu-node-05 20.00 GB/s); slow link gpu-node-00 <-> gpu-node-01 (round "
    )


def test_the_warning_about_other_nodes_points_at_the_suite_check(tmp_path) -> None:
    run = load_pair_run(write_pair_run(tmp_path, 4, rates=slow_node(4, 3)))
    with pytest.warns(UserWarning) as caught:
        suite.test_no_slow_node_or_link(run, NO_SPEC, facts_of("gpu-node-00"), lambda *a: None)
    assert caught[0].filename == suite.__file__
