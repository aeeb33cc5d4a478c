"""Two nodes, several ports: the ports between them judged against each other (rigcheck/rdma/
perftest_verdict.py rail_findings), at and around the 10% band, and the one case nothing can
judge. Rates are written by the test over real perftest outputs (tests/replay/rdma_runs.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replay"))
from rdma_runs import write_run

from rigcheck.rdma.perftest_run import load_rdma_run
from rigcheck.rdma.perftest_verdict import bandwidth_findings, nothing_compared


def run_with(tmp_path, ports=3, **slow):
    rates = {(0, 1, port): rate for port, rate in slow.items()}
    return load_rdma_run(write_run(tmp_path, nodes=2, ports=ports, slow=rates))


@pytest.mark.parametrize(
    ("rate", "slow"), [(352.9, False), (352.8, False), (352.7, True), (196.0, True)]
)
def test_a_port_is_slow_only_more_than_10_percent_under_the_others(tmp_path, rate, slow):
    found = bandwidth_findings(run_with(tmp_path, **{"mlx5_1:1": rate}), floor=None)
    assert bool(found) is slow
    if slow:
        (line,) = found
        assert line.startswith(f"slow port pair gpu-node-00 <-> gpu-node-01 on mlx5_1:1: {rate}")
        assert "392.0 Gb/s of the other ports" in line


def test_the_reference_is_never_above_the_fastest_port(tmp_path):
    """Two ports: the upper median is the faster one, so only the slower can be named."""
    found = bandwidth_findings(run_with(tmp_path, ports=2, **{"mlx5_0:1": 200.0}), floor=None)
    assert len(found) == 1 and "on mlx5_0:1: 200.0 Gb/s" in found[0]


def test_a_floor_still_judges_every_port_on_its_own(tmp_path):
    found = bandwidth_findings(run_with(tmp_path, ports=2), floor=400.0)
    assert [line.split(":")[0] for line in found] == [
        "slow pair gpu-node-00 <-> gpu-node-01 on mlx5_0",
        "slow pair gpu-node-00 <-> gpu-node-01 on mlx5_1",
    ]


def test_nothing_to_compare_is_said_only_for_one_port_one_pair_and_no_floor(tmp_path):
    one = load_rdma_run(write_run(tmp_path / "a", nodes=2, ports=1))
    said = nothing_compared(one, None)
    assert said == (
        "cannot judge the RDMA bandwidth: one port (mlx5_0:1) between one node pair, nothing to "
        "compare it with and no site floor (--fabric FILE with perftest figures). Run 3 or more "
        "nodes, or give the fabric spec."
    )
    assert nothing_compared(one, 380.0) is None
    assert (
        nothing_compared(load_rdma_run(write_run(tmp_path / "b", nodes=2, ports=2)), None) is None
    )
    assert (
        nothing_compared(load_rdma_run(write_run(tmp_path / "c", nodes=3, ports=1)), None) is None
    )


def test_pairs_that_failed_do_not_count_as_compared(tmp_path):
    """Three nodes, one port, two of the three pairs failed to run: one pair was measured, and
    nothing is there to compare it with."""
    run_dir = write_run(tmp_path, nodes=3, ports=1)
    failed = sorted((run_dir / "pairs").glob("*.json"))[1:]
    for path in failed:
        entry = json.loads(path.read_text())
        entry["write_bw"] = {"error": "ib_write_bw: Couldn't connect to 10.0.0.2:18515"}
        path.write_text(json.dumps(entry))
    assert "between one node pair" in nothing_compared(load_rdma_run(run_dir), None)


def test_a_port_without_results_does_not_stop_the_next_being_judged(tmp_path):
    """Every pair on mlx5_0:1 missing (judged by test_every_rdma_pair_measured): mlx5_1:1's slow
    link is still named."""
    drop = {(r, a, b, "mlx5_0:1") for r in (1, 2, 3) for a in range(4) for b in range(4)}
    run_dir = write_run(tmp_path, nodes=4, ports=2, drop=drop, slow={(0, 1, "mlx5_1:1"): 250.0})
    found = bandwidth_findings(load_rdma_run(run_dir), floor=None)
    assert [line.split(" (")[0] for line in found] == [
        "slow link gpu-node-00 <-> gpu-node-01 on mlx5_1:1"
    ]


@pytest.mark.parametrize(("file", "key", "value"), [("plan", "rounds", None), ("pair", "port", 3)])
def test_a_damaged_run_folder_names_the_file_and_field(tmp_path, file, key, value):
    """plan.json and the pair results are checked before judging (rigcheck/distributed/
    run_folder.py): a missing or mistyped field fails naming it, not as a KeyError later."""
    from rigcheck.rdma.perftest_run import RdmaRunError

    run_dir = write_run(tmp_path, nodes=2, ports=1)
    path = run_dir / "plan.json" if file == "plan" else next((run_dir / "pairs").glob("*.json"))
    data = json.loads(path.read_text())
    data[key] = value
    path.write_text(json.dumps(data))
    with pytest.raises(RdmaRunError) as refused:
        load_rdma_run(run_dir)
    assert str(refused.value) == (
        f"{path}: '{key}' is {value!r}, not a {'list' if key == 'rounds' else 'str'}: the file "
        "is damaged or not written by rigcheck.rdma.perftest_worker"
    )
