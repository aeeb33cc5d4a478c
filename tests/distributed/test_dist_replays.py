"""The distributed suite on recorded nodes: each healthy one passes, each broken one fails at
exactly its check, with a message that names the GPU, pair or rank."""

import json

import pytest
from dist_scenarios import FIXTURES, render, scenarios

from rigcheck.distributed.progress import STAGES
from rigcheck.spec import load_spec
from rigcheck.testing.synthetic import synthetic_snapshot

CLASS_ARGS = {
    "h100": ["-m", "h100 and distributed", "--gpus", "8"],
    "l40s": ["-m", "l40s and distributed"],
}
# 8x L40S has no public all-reduce reference: its floor is null and the check fails closed.
L40S_CLOSED = {"test_allreduce_bus_bandwidth": "no reference for this class"}
COLLECTIVE_CHECKS = [
    "test_allreduce_correct",
    "test_allreduce_bus_bandwidth",
    "test_allgather_and_reducescatter",
    "test_nccl_p2p_not_disabled",
    "test_nccl_socket_interface_exists",
    "test_peer_access_where_expected",
    "test_peer_copies_verified",
    "test_no_slow_gpu_pair",
    "test_peer_copy_bandwidth",
]
EXPECTED_FAILURES = {
    "h100_8x_nvswitch": {},
    "l40s_8x_pcie": L40S_CLOSED,
    "h100_nvlink_down": {
        "test_gpu_pairs_linked_as_the_class_expects": "7 of 28 GPU pairs short of NVLink: "
        "GPU 0 <-> GPU 3: 17 NVLinks (expected 18)",
    },
    "l40s_p2p_disabled": {
        **L40S_CLOSED,
        "test_p2p_where_the_class_expects_it": "P2P unavailable on 12 of 12 GPU pairs that should "
        "have it: GPU 0 <-> GPU 1 (PCIe PIX): read chipset_not_supported, write "
        "chipset_not_supported",
        "test_peer_access_where_expected": "GPU 0 <-> GPU 1 (PCIe PIX)",
        "test_peer_copy_bandwidth": "below the floor: measured 10.9 GB/s (floor 15.7",
    },
    "h100_slow_pair": {
        "test_no_slow_gpu_pair": "GPU 3 <-> GPU 5: 150 GB/s, others 382 "
        "(median of 27 NV18 through NVSwitch pairs)",
    },
    "h100_wrong_numa": {
        "test_gpu_numa_node_matches_cpu_affinity": "GPU 5 (0000:ab:00.0): PCI device on NUMA "
        "node 0, but its CPU affinity 56-111,168-223 is on node 1",
    },
    "l40s_unbalanced_numa": {
        **L40S_CLOSED,
        "test_gpus_split_evenly_across_numa_nodes": "node 0: GPU 0, 1, 2, 3, 4 (5); "
        "node 1: GPU 5, 6, 7 (3)",
    },
    "l40s_nccl_env_broken": {
        **L40S_CLOSED,
        "test_nccl_p2p_not_disabled": "NCCL_P2P_DISABLE=1",
        "test_nccl_socket_interface_exists": "NCCL_SOCKET_IFNAME=eth0 matches none of ens5, lo",
    },
    "h100_rank_hang": {
        "test_process_group_started_on_every_rank": "rank 5 (GPU 5) did not answer: last at "
        "'allreduce' (iteration 3/7, 8589934592 bytes), its heartbeat stopped 479 s before the end",
        **{name: "cannot check: the torchrun job did not finish" for name in COLLECTIVE_CHECKS},
    },
}


def replay_args(name: str) -> list[str]:
    node, _, _ = scenarios()[name]
    folder = FIXTURES / name
    return [
        *CLASS_ARGS[node.cls],
        f"--facts={folder / 'facts.json'}",  # one token each: a separate path reads as a test
        f"--collectives={folder / 'collectives.json'}",
    ]


@pytest.mark.parametrize("name", list(EXPECTED_FAILURES))
def test_replay_fails_exactly_its_checks(run_suite, name):
    result = run_suite(*replay_args(name), "-rs")
    expected = EXPECTED_FAILURES[name]
    assert not [n for n, o in result.outcomes.items() if o == "error"], result.describe()
    assert set(result.failed()) == set(expected), result.describe()
    for test, message in expected.items():
        assert message in result.messages[test], (
            f"{test}: {message!r} not in\n{result.messages[test]}"
        )
    assert result.ret == (1 if expected else 0), result.describe()


def test_every_scenario_is_judged():
    assert set(EXPECTED_FAILURES) == set(scenarios())


def test_healthy_h100_header_names_the_pairs(run_suite):
    result = run_suite(*replay_args("h100_8x_nvswitch"))
    assert "rigcheck: GPU pairs: 28 x NV18 through NVSwitch" in result.output, result.output
    assert result.outcomes["test_gpus_split_evenly_across_numa_nodes"] == "passed"


def test_healthy_l40s_names_its_pcie_paths_and_nvls_state(run_suite):
    result = run_suite(*replay_args("l40s_8x_pcie"))
    assert "rigcheck: GPU pairs: 16 x PCIe SYS, 12 x PCIe PIX" in result.output, result.output
    closed = result.messages["test_allreduce_bus_bandwidth"]
    assert "NVLS used: False (NCCL_ALGO=Ring leaves NVLS out)" in closed, closed
    assert "'NCCL_SOCKET_IFNAME': 'eth0'" in closed, closed


def test_single_gpu_skips_the_pair_checks_with_a_reason(run_suite, tmp_path):
    facts = json.loads((FIXTURES / "h100_8x_nvswitch" / "facts.json").read_text())
    facts["devices"] = facts["devices"][:1]
    facts["topology"]["gpus"] = facts["topology"]["gpus"][:1]
    facts["topology"]["pairs"] = []
    path = tmp_path / "one-gpu.json"
    path.write_text(json.dumps(facts))
    result = run_suite("-m", "h100 and distributed", f"--facts={path}")
    assert result.ret == 0, result.describe()
    assert set(result.outcomes.values()) == {"skipped"}, result.describe()
    topology = result.messages["test_p2p_where_the_class_expects_it"]
    assert "one GPU: no pair to judge" in topology, topology
    collectives = result.messages["test_allreduce_correct"]
    assert "Pass --collectives=PATH to replay its collectives too" in collectives, collectives


def test_a_missing_collectives_file_is_a_usage_error(run_suite, tmp_path):
    result = run_suite("-m", "cpu and distributed", f"--collectives={tmp_path / 'none.json'}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "none.json: no such file or folder" in result.output


@pytest.mark.parametrize("name", list(EXPECTED_FAILURES))
def test_dist_fixtures_match_generator(name):
    """The files are data; dist_scenarios.py writes them (--write) and must agree with them."""
    for file, text in render(name).items():
        assert (FIXTURES / name / file).read_text() == text, (
            f"fixtures/distributed/{name}/{file} differs from dist_scenarios.py: "
            "run `python tests/distributed/dist_scenarios.py --write`"
        )


def test_stage_names_cover_the_hang_scenario():
    assert "allreduce" in STAGES


@pytest.mark.parametrize("name", ["h100", "v100", "l40s", "rtx4090"])
def test_a_synthetic_node_with_a_healthy_topology_passes(run_suite, tmp_path, name):
    """The topology of rigcheck.testing.synthetic's 8-GPU snapshots passes the topology checks."""
    facts = synthetic_snapshot(load_spec(name), gpus=8)
    path = tmp_path / "node.json"
    path.write_text(json.dumps(facts))
    result = run_suite(
        "-m", f"{name} and distributed", "--gpus", "8", f"--facts={path}", "-k", "topology"
    )
    assert result.ret == 0, result.describe()
    passed = {n for n, outcome in result.outcomes.items() if outcome == "passed"}
    assert "test_gpu_numa_node_matches_cpu_affinity" in passed, result.describe()


def test_a_rank_without_a_collective_result_fails_rather_than_skips(run_suite, tmp_path):
    """A missing measurement is not a skip: the check says which rank lacks it."""
    folder = FIXTURES / "h100_8x_nvswitch"
    run = json.loads((folder / "collectives.json").read_text())
    del run["ranks"][3]["allgather"]
    path = tmp_path / "collectives.json"
    path.write_text(json.dumps(run))
    result = run_suite(
        *CLASS_ARGS["h100"], f"--facts={folder / 'facts.json'}", f"--collectives={path}"
    )
    assert set(result.failed()) == {"test_allgather_and_reducescatter"}, result.describe()
    message = result.messages["test_allgather_and_reducescatter"]
    assert "rank 3 (GPU 3) has no allgather result" in message, message
