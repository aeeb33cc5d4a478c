"""Node pairs across N nodes: every planned pair measured, and the slow node or link named.

Reads a node-pair run (--node-pairs=DIR, written by rigcheck.distributed.pair_worker on every
node): rounds in which each node all-reduces with one partner. A pair is slow under the class's
node-pair floor (node_pair_busbw_gbps, where the class has one) or more than the fleet band (10%,
SuperBench's rule, as `rigcheck fleet`) below the fleet's reference pair; rigcheck.distributed.
pair_verdict says how a slow pair is put down to a node or to a link. Two nodes make one pair,
which nothing but a floor can judge: without one the check skips, saying so.

Every node judges the same run. Run on one of its nodes, the check fails for what involves that
node (it is the slow node, or an end of a slow link) and only warns about the others, so each
node's certificate, and `rigcheck fleet` over them, names the nodes to drain and no others. Run
elsewhere (a head node), it fails for any finding.
"""

import warnings

import pytest

from rigcheck.distributed.pair_verdict import judge_pairs
from rigcheck.fleet.judge import OUTLIER_BAND

pytestmark = [pytest.mark.distributed, pytest.mark.slow]
FIGURE = "node_pair_busbw_gbps"
ADVICE = (
    "A slow node: its NICs (`ibstat`, port rate, test_rdma_port_rate), its PCIe links, "
    "GPUDirect. A slow link: the cable, transceiver or switch port between the two "
    "(`ibdiagnet`, the switch's port counters)."
)


def test_every_node_pair_measured(pair_run):
    missing = pair_run.missing()
    assert not missing, (
        f"node pairs without a good result in {pair_run.source}:\n  " + "\n  ".join(missing)
    ) + "\nA pair that never finished: its job's log (torchrun) names the rank that failed."


def findings(pair_run, verdict) -> list[tuple[set[int], str]]:
    """(the nodes it involves, what to say) for each slow node, slow link and undecided pair."""
    found = []
    for node, pairs in verdict.slow_nodes.items():
        rates = ", ".join(
            f"{pair_run.label(r)} {r.busbw_gbps:,.2f}" for r in sorted(pairs, key=lambda r: r.nodes)
        )
        found.append(
            ({node}, f"slow node {pair_run.name(node)}: slow with all {len(pairs)} partners "
             f"({rates} GB/s)")
        )  # fmt: skip
    for pair in verdict.slow_links:
        found.append(
            (set(pair.nodes), f"slow link {pair_run.label(pair)} (round {pair.round}): "
             f"{pair.busbw_gbps:,.2f} GB/s, while both nodes are fast with their other partners")
        )  # fmt: skip
    for pair in verdict.undecided:
        found.append(
            (set(pair.nodes), f"slow pair {pair_run.label(pair)} (round {pair.round}): "
             f"{pair.busbw_gbps:,.2f} GB/s; a node in it met no other partner, so node and link "
             "cannot be told apart: run more rounds (--rounds)")
        )  # fmt: skip
    return found


def one_pair_only(pair_run, results) -> str:
    """Why two nodes cannot be judged without a floor: a pair is slow only next to another."""
    rates = ", ".join(f"{pair_run.label(r)} {r.busbw_gbps:,.2f} GB/s" for r in results)
    return (
        f"cannot judge the node pair ({rates}): two nodes make one pair and there is no other "
        f"pair to compare it with, and this class has no {FIGURE} floor. Run 3 or more nodes "
        "(a slow node is then named at 3)."
    )


def test_no_slow_node_or_link(pair_run, spec, facts, record_property):
    results = pair_run.results()
    if not results:
        pytest.fail(f"cannot check: no pair result in {pair_run.source}", pytrace=False)
    floor = ((spec.figures.get(FIGURE) or {}).get("floor") or {}).get("value")
    verdict = judge_pairs(results, OUTLIER_BAND, floor)
    record_property(
        FIGURE, {f"round {r.round} {pair_run.label(r)}": round(r.busbw_gbps, 3) for r in results}
    )
    if not verdict.compared and floor is None:
        pytest.skip(one_pair_only(pair_run, results))
    found = findings(pair_run, verdict)
    me = pair_run.node_of(facts.find("host.hostname"))
    mine = [line for nodes, line in found if me is None or me in nodes]
    others = [line for nodes, line in found if me is not None and me not in nodes]
    how = (
        f"Slow = {verdict.why} (median over nodes of each node's upper-median pair), threshold "
        f"{verdict.threshold_gbps:,.2f} GB/s."
    )
    if others:
        warnings.warn(f"other nodes' pairs: {'; '.join(others)}. {how}", stacklevel=1)
    assert not mine, f"node-pair all-reduce bus bandwidth: {'; '.join(mine)}. {how} {ADVICE}"
