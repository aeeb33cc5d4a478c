"""8x H100 where NCCL reports NVLS unavailable (a VM, some fabric-manager setups): ring
all-reduce is the healthy figure there (issue 10). A healthy ring passes, a slow one still
fails, and NVLS turned off by a setting is still judged by the NVLS figure."""

import json

import pytest
from dist_scenarios import H100_LOG, Job, collectives, facts, h100_node

NO_NVLS = {"version": "2.21.5+cuda12.4", "nvls_available": False, "nvls_channels": None}
TEST = "test_allreduce_bus_bandwidth"


@pytest.fixture
def allreduce(run_suite, tmp_path):
    def run(busbw: float, nccl_log=H100_LOG, **job):
        node, job = h100_node(), Job(busbw=busbw, unidir=382.0, nccl_log=nccl_log, **job)
        (tmp_path / "facts.json").write_text(json.dumps(facts(node)))
        (tmp_path / "collectives.json").write_text(json.dumps(collectives(node, job)))
        result = run_suite(
            "-m", "h100 and distributed", "--gpus", "8", "-k", TEST,
            f"--facts={tmp_path / 'facts.json'}", f"--collectives={tmp_path / 'collectives.json'}",
        )  # fmt: skip
        return result.outcomes[TEST], result.messages.get(TEST, "")

    return run


def test_a_healthy_ring_passes_where_nccl_has_no_nvls(allreduce):
    outcome, message = allreduce(busbw=362.0, nccl_log=NO_NVLS)
    assert outcome == "passed", message


def test_a_slow_ring_still_fails_naming_the_ring_figure(allreduce):
    outcome, message = allreduce(busbw=250.0, nccl_log=NO_NVLS)
    assert outcome == "failed", message
    assert "allreduce_ring_busbw_gbps" in message and "NVLS unavailable" in message, message


def test_ring_speed_with_nvls_available_still_fails(allreduce):
    """NVLS available but not reached: the NVLS figure judges, as before."""
    outcome, message = allreduce(busbw=362.0)
    assert outcome == "failed" and "allreduce_busbw_gbps" in message, message


def test_nvls_turned_off_by_a_setting_is_judged_by_the_nvls_figure(allreduce):
    log = {"version": "2.21.5+cuda12.4", "nvls_available": True, "nvls_channels": 0}
    outcome, message = allreduce(busbw=362.0, nccl_log=log, env={"NCCL_NVLS_ENABLE": "0"})
    assert outcome == "failed" and "NCCL_NVLS_ENABLE=0" in message, message
