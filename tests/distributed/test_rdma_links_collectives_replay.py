"""The collective job's RDMA counters judged on a replayed 8x H100 run (fixtures/distributed/
h100_8x_nvswitch) to which the test adds rank 0's samples: all 0 before and after passes; a
port whose link_downed went 0 -> 1 during the job fails naming the host and port. The counter
values are written by the test (healthy ones as in prometheus/procfs's sysfs fixture)."""

import copy
import json
import re
from pathlib import Path

import pytest

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures/distributed/h100_8x_nvswitch"
CHECK = "test_no_rdma_link_flap_during_collectives"


def sample(downed: int) -> dict:
    ports = {f"mlx5_{i}/1": {"counters": {"link_downed": downed if i == 3 else 0,
                                          "link_error_recovery": 0, "symbol_error": 0},
                             "hw_counters": None} for i in range(8)}  # fmt: skip
    return {"t": 0.0, "ports": ports}


def run_with_counters(tmp_path, after_downed: int | None) -> Path:
    data = copy.deepcopy(json.loads((FIXTURE / "collectives.json").read_text()))
    if after_downed is not None:
        rank0 = next(r for r in data["ranks"] if r["rank"] == 0)
        rank0["rdma_counters"] = {"before": sample(0), "after": sample(after_downed)}
    path = tmp_path / "collectives.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(("downed", "outcome"), [(0, "passed"), (1, "failed"), (None, "skipped")])
def test_a_link_down_during_the_collective_job_fails(run_suite, tmp_path, downed, outcome):
    result = run_suite(
        "-m", "h100 and distributed", "--gpus", "8", f"--facts={FIXTURE / 'facts.json'}",
        f"--collectives={run_with_counters(tmp_path, downed)}", "-k", CHECK,
    )  # fmt: skip
    assert result.outcomes[CHECK] == outcome, result.describe()
    if outcome == "failed":
        assert (
            "mlx5_3 port 1: the link went down 1 time(s) during the collective job"
            in (result.messages[CHECK])
        )


def test_a_few_errors_during_the_job_warn_from_the_suite_check(run_suite, tmp_path):
    data = json.loads((FIXTURE / "collectives.json").read_text())
    rank0 = next(r for r in data["ranks"] if r["rank"] == 0)
    after = sample(0)
    after["ports"]["mlx5_2/1"]["counters"]["symbol_error"] = 3
    rank0["rdma_counters"] = {"before": sample(0), "after": after}
    path = tmp_path / "collectives.json"
    path.write_text(json.dumps(data))
    result = run_suite(
        "-m", "h100 and distributed", "--gpus", "8", f"--facts={FIXTURE / 'facts.json'}",
        f"--collectives={path}", "-k", CHECK,
    )  # fmt: skip
    assert result.outcomes[CHECK] == "passed", result.describe()
    line = next(x for x in result.output.splitlines() if "UserWarning: RDMA errors" in x)
    assert re.search(r"test_rdma_links_collectives\.py:\d+: UserWarning", line), line
    assert "mlx5_2 port 1: 3 new errors during the collective job" in line
