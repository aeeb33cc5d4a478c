"""The RDMA link check of the burn-in, replayed through the real suite: a link that went down
or retrained under load fails naming the port; a trace without counters fails closed on a
node with RDMA ports and skips on one without."""

import copy
import re

from burnin_runs import failed

from rigcheck.testing.synthetic_trace import good_trace

CHECK = "test_no_rdma_link_flap_during_burn_in"


def test_a_link_down_during_the_burn_in_fails_naming_the_port(judge_trace):
    trace = copy.deepcopy(good_trace())
    trace["rdma_counters"]["after"]["ports"]["mlx5_2/1"]["counters"]["link_downed"] = 1
    _, cases = judge_trace(trace)
    assert failed(cases) == {CHECK}
    assert "mlx5_2 port 1: the link went down 1 time(s) during the burn-in" in cases[CHECK].message


def test_errors_grown_past_the_limit_fail_and_a_few_only_warn(judge_trace):
    trace = copy.deepcopy(good_trace())
    trace["rdma_counters"]["after"]["ports"]["mlx5_0/1"]["counters"]["symbol_error"] = 101
    _, cases = judge_trace(trace)
    assert failed(cases) == {CHECK} and "101 new errors" in cases[CHECK].message
    trace["rdma_counters"]["after"]["ports"]["mlx5_0/1"]["counters"]["symbol_error"] = 3
    result, cases = judge_trace(trace)
    assert failed(cases) == set()
    # The warning points at the suite check that raised it (stacklevel 1), not at pytest.
    line = next(x for x in result.stdout.lines if "UserWarning: RDMA errors" in x)
    assert re.search(r"test_rdma_links\.py:\d+: UserWarning", line), line


def test_a_trace_without_rdma_counters_skips_on_a_node_without_rdma(judge_trace):
    trace = good_trace()
    del trace["rdma_counters"]
    _, cases = judge_trace(trace)
    assert cases[CHECK].outcome == "skipped"
