"""RDMA pair runs replayed through the real suite (suites/distributed/test_rdma_pairs.py): a
healthy fleet passes; a slow port, a slow node, a slow link, a missing pair and a high latency
tail each fail at their check naming the node, port or link. Each pair's result is a real
perftest output parsed (fixtures/rdma/perftest/); the rates are set by the test (rdma_runs.py)."""

import json
import re
from pathlib import Path

import pytest
from rdma_runs import write_run

from rigcheck.spec import load_spec
from rigcheck.testing.synthetic import synthetic_snapshot

SPEC = Path(__file__).resolve().parents[2] / "docs/fabric/dgx-h100.json"  # 380 Gb/s, 4.2 us
CHECKS = {"test_every_rdma_pair_measured", "test_no_slow_rdma_port_node_or_link",
          "test_rdma_read_latency", "test_no_rdma_link_flap_during_pairs"}  # fmt: skip


@pytest.fixture(scope="module")
def h100_node():
    return synthetic_snapshot(load_spec("h100"), gpus=8)


def judge(replay, snapshot, run_dir):
    return replay(snapshot, "-m", "h100", "--gpus", "8", f"--fabric={SPEC}",
                  f"--rdma-pairs={run_dir}", "-k", "test_rdma_pairs")  # fmt: skip


def test_a_healthy_fleet_passes(replay, h100_node, tmp_path):
    result = judge(replay, h100_node, write_run(tmp_path))
    assert result.ret == 0 and "4 passed" in result.output, result.describe()


CASES = {
    "slow_port": ({"slow": {(2, None, "mlx5_1:1"): 200.0}}, "test_no_slow_rdma_port_node_or_link",
                  "slow port gpu-node-02 mlx5_1:1: slow with all 3 partners"),
    "slow_node": ({"slow": {(3, None, "mlx5_0:1"): 150.0, (3, None, "mlx5_1:1"): 150.0}},
                  "test_no_slow_rdma_port_node_or_link", "slow node gpu-node-03: slow on every"),
    "slow_link": ({"slow": {(0, 1, "mlx5_0:1"): 250.0}}, "test_no_slow_rdma_port_node_or_link",
                  "slow link gpu-node-00 <-> gpu-node-01 on mlx5_0:1"),
    "fleet_under_floor": ({"bw": 300.0}, "test_no_slow_rdma_port_node_or_link",
                          "under the site floor 380 Gb/s"),
    "missing_pair": ({"drop": {(1, 0, 3, "mlx5_1:1")}}, "test_every_rdma_pair_measured",
                     "round 1 gpu-node-00 <-> gpu-node-03 on mlx5_1:1: no result"),
    "latency_tail": ({"lat": {(1, 2, "mlx5_0:1"): 9.5}}, "test_rdma_read_latency",
                     "gpu-node-01 <-> gpu-node-02 on mlx5_0:1 (round 1): p99 9.50 us, above 4.2"),
    "link_flap": ({"flaps": {(2, 0, 2, "mlx5_1:1")}}, "test_no_rdma_link_flap_during_pairs",
                  "gpu-node-02 mlx5_1 port 1: the link went down 1 time(s) during the traffic "
                  "of round 2 gpu-node-00 <-> gpu-node-02"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_fault_fails_at_its_check_naming_it(replay, h100_node, tmp_path, case):
    kwargs, check, message = CASES[case]
    result = judge(replay, h100_node, write_run(tmp_path, **kwargs))
    assert set(result.failed) == {check}, result.describe()
    assert message in result.failed[check], result.failed[check]


def test_without_a_run_the_checks_skip_saying_how(replay, h100_node):
    result = replay(h100_node, "-m", "h100", "--gpus", "8", "-k", "test_rdma_pairs", "-rs")
    assert result.ret == 0 and "4 skipped" in result.output, result.describe()
    assert "rigcheck.rdma.perftest_worker" in result.output


def test_a_folder_that_is_not_a_run_fails_closed(replay, h100_node, tmp_path):
    result = judge(replay, h100_node, tmp_path)
    assert result.ret == 1 and set(result.errors) == CHECKS, result.describe()
    assert "no plan.json" in result.errors["test_every_rdma_pair_measured"]


def test_a_port_one_node_lacks_and_a_failed_client_are_named(replay, h100_node, tmp_path):
    run_dir = write_run(tmp_path)
    plan = json.loads((run_dir / "plan.json").read_text())
    plan["nodes"][1]["ports"] = ["mlx5_0:1"]
    (run_dir / "plan.json").write_text(json.dumps(plan))
    failed = run_dir / "pairs" / "round01.node0-node3.mlx5_0-1.json"
    entry = json.loads(failed.read_text())
    entry["write_bw"] = {"error": "ib_write_bw exit 1: no result table (did it connect?)"}
    failed.write_text(json.dumps(entry))
    result = judge(replay, h100_node, run_dir)
    assert set(result.failed) == {"test_every_rdma_pair_measured"}, result.describe()
    message = result.failed["test_every_rdma_pair_measured"]
    assert (
        "round 1 gpu-node-00 <-> gpu-node-03 on mlx5_0:1: write_bw failed: ib_write_bw" in message
    )
    assert "round 2 gpu-node-01 <-> gpu-node-03 on mlx5_1:1: gpu-node-01 has no mlx5_1:1" in message
    assert "or perftest failing to connect (`ibv_devinfo`, the port's state, a firewall" in message


def test_the_message_says_which_memory_and_which_floor(replay, h100_node, tmp_path):
    slow = {"slow": {(2, None, "mlx5_1:1"): 200.0}}
    gdr = judge(replay, h100_node, write_run(tmp_path / "gdr", **slow))
    assert (
        "RDMA write bandwidth, GPU memory (--use_cuda), floor 380 Gb/s (GPUDirect write"
        in (gdr.failed["test_no_slow_rdma_port_node_or_link"])
    )
    host = judge(replay, h100_node, write_run(tmp_path / "host", gpudirect=False, **slow))
    message = host.failed["test_no_slow_rdma_port_node_or_link"]
    assert "RDMA write bandwidth, host memory, no site floor: the fleet only: slow port" in message
    assert "more than 10% below this port's fleet reference 392.0 Gb/s" in message


def test_a_few_errors_during_a_pair_warn_from_the_suite_check(replay, h100_node, tmp_path):
    run_dir = write_run(tmp_path)
    path = run_dir / "pairs" / "round01.node1-node2.mlx5_0-1.json"
    entry = json.loads(path.read_text())
    entry["counters"]["after"]["ports"]["mlx5_0/1"]["counters"]["symbol_error"] = 2
    path.write_text(json.dumps(entry))
    result = judge(replay, h100_node, run_dir)
    assert result.ret == 0, result.describe()
    line = next(x for x in result.output.splitlines() if "UserWarning: RDMA errors" in x)
    assert re.search(r"test_rdma_pairs\.py:\d+: UserWarning", line), line
    assert "gpu-node-02 mlx5_0 port 1: 2 new errors during the traffic of round 1" in line


def judge_without_floor(replay, snapshot, run_dir):
    """No --fabric: no site floor, the run judged only against itself."""
    return replay(snapshot, "-m", "h100", "--gpus", "8", f"--rdma-pairs={run_dir}",
                  "-k", "test_no_slow_rdma_port_node_or_link", "-rs")  # fmt: skip


def test_two_nodes_name_a_port_at_half_rate_against_the_other_ports(replay, h100_node, tmp_path):
    """Two nodes make one pair per port: a rail at half rate (a 400G port trained to 200G) is
    named against the other rails between the same two nodes, with no floor to lean on."""
    run_dir = write_run(tmp_path, nodes=2, ports=4, slow={(0, 1, "mlx5_2:1"): 196.0})
    result = judge_without_floor(replay, h100_node, run_dir)
    (check,) = result.failed
    assert (
        "slow port pair gpu-node-00 <-> gpu-node-01 on mlx5_2:1: 196.0 Gb/s"
        in (result.failed[check])
    ), result.describe()
    assert (
        "mlx5_0:1" not in result.failed[check]
        and "392.0 Gb/s of the other ports" in (result.failed[check])
    )


def test_two_nodes_whose_ports_agree_within_the_band_pass(replay, h100_node, tmp_path):
    run_dir = write_run(tmp_path, nodes=2, ports=4, slow={(0, 1, "mlx5_2:1"): 356.0})
    result = judge_without_floor(replay, h100_node, run_dir)  # 356 is 9.2% under 392: noise
    assert result.ret == 0 and "1 passed" in result.output, result.describe()


def test_one_port_between_two_nodes_without_a_floor_skips_saying_why(replay, h100_node, tmp_path):
    run_dir = write_run(tmp_path, nodes=2, ports=1)
    result = judge_without_floor(replay, h100_node, run_dir)
    assert result.ret == 0 and "1 skipped" in result.output, result.describe()
    assert "one port (mlx5_0:1) between one node pair" in result.output
