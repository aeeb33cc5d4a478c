"""RDMA port error counters: read from real sysfs listings (prometheus/procfs's fixture, an
iWARP NIC without a PMA from node_exporter#966), judged as they stand and over a run."""

import pytest
from sysfs_listing import fixture_tree

from rigcheck.facts.fabric.rdma_counters import sample_ports
from rigcheck.rdma.counter_verdict import FAIL_ABOVE, judge_change, judge_levels

HEALTHY = "procfs-healthy.txt"
NO_PMA = "node-exporter-966-i40iw.txt"


def test_the_probe_reads_every_port_of_the_real_tree(tmp_path):
    ports = sample_ports(fixture_tree(tmp_path, HEALTHY))["ports"]
    assert sorted(ports) == ["hfi1_0/1", "mlx4_0/1", "mlx4_0/2", "mlx5_0/1"]
    mlx5 = ports["mlx5_0/1"]
    assert mlx5["counters"]["link_downed"] == 0 and mlx5["counters"]["symbol_error"] == 0
    assert mlx5["hw_counters"]["out_of_sequence"] == 1  # the driver's counters, read not judged
    assert ports["mlx4_0/1"]["hw_counters"] is None
    assert "port_rcv_data" not in mlx5["counters"]  # traffic counters are not error counters


def test_healthy_real_ports_pass(tmp_path):
    assert judge_levels(sample_ports(fixture_tree(tmp_path, HEALTHY))["ports"]) == ([], [])


def test_a_port_without_pma_cannot_be_judged_and_says_why(tmp_path):
    failures, _ = judge_levels(sample_ports(fixture_tree(tmp_path, NO_PMA))["ports"])
    assert len(failures) == 1
    assert failures[0].startswith("i40iw0 port 1: ") and "'N/A (no PMA)'" in failures[0]


def test_no_infiniband_class_is_an_empty_sample(tmp_path):
    assert sample_ports(tmp_path)["ports"] == {}


@pytest.mark.parametrize(
    ("symbol", "rcv", "fails", "warns"),
    [("0", "0", False, False), ("1", "0", False, True), ("96", "4", False, True),
     ("97", "4", True, False), ("65535", "0", True, False)],
)  # fmt: skip
def test_level_limits_are_gcms(tmp_path, symbol, rcv, fails, warns):
    changed = {"mlx5_0/ports/1/counters/symbol_error": symbol,
               "mlx5_0/ports/1/counters/port_rcv_errors": rcv}  # fmt: skip
    failures, warnings = judge_levels(
        sample_ports(fixture_tree(tmp_path, HEALTHY, changed))["ports"]
    )
    assert bool(failures) is fails and bool(warnings) is warns
    for line in failures + warnings:
        assert line.startswith("mlx5_0 port 1: ")
    if symbol == "65535":
        assert "symbol_error 65535 (stuck at its maximum: at least)" in failures[0]
    if fails and symbol == "97":
        assert failures == ["mlx5_0 port 1: 101 errors (port_rcv_errors 4, symbol_error 97)"]
    assert FAIL_ABOVE == 100


def samples(tmp_path, after: dict[str, str]):
    before = sample_ports(fixture_tree(tmp_path / "before", HEALTHY))
    return before, sample_ports(fixture_tree(tmp_path / "after", HEALTHY, after))


def test_an_unchanged_run_passes(tmp_path):
    assert judge_change(*samples(tmp_path, {}), "burn-in") == ([], [])


@pytest.mark.parametrize(
    ("counter", "what"),
    [("link_downed", "the link went down 1 time(s) during the burn-in (link_downed 0 -> 1)"),
     ("link_error_recovery",
      "the link retrained (link error recovery) 1 time(s) during the burn-in "
      "(link_error_recovery 0 -> 1)")],
)  # fmt: skip
def test_a_link_that_flapped_during_the_run_fails_naming_the_port(tmp_path, counter, what):
    failures, _ = judge_change(
        *samples(tmp_path, {f"mlx4_0/ports/2/counters/{counter}": "1"}), "burn-in"
    )
    assert failures == [f"mlx4_0 port 2: {what}"]


def test_errors_grown_during_the_run_warn_then_fail(tmp_path):
    _, warned = judge_change(
        *samples(tmp_path / "a", {"hfi1_0/ports/1/counters/port_rcv_errors": "3"}), "job"
    )
    assert warned == ["hfi1_0 port 1: 3 new errors during the job (port_rcv_errors 3)"]
    failed, _ = judge_change(
        *samples(tmp_path / "b", {"hfi1_0/ports/1/counters/symbol_error": "101"}), "job"
    )
    assert failed == ["hfi1_0 port 1: 101 new errors during the job (symbol_error 101)"]
    passed = judge_change(
        *samples(tmp_path / "c", {"hfi1_0/ports/1/counters/symbol_error": "100"}), "job"
    )
    assert passed[0] == []


def test_counters_reset_during_the_run_cannot_be_judged(tmp_path):
    before = sample_ports(
        fixture_tree(tmp_path / "b", HEALTHY, {"mlx5_0/ports/1/counters/link_downed": "3"})
    )
    after = sample_ports(fixture_tree(tmp_path / "a", HEALTHY))
    failures, _ = judge_change(before, after, "burn-in")
    assert failures == [
        "mlx5_0 port 1: link_downed went from 3 to 0 during the burn-in: the counters "
        "were reset (perfquery -R, a driver reload); the change cannot be judged"
    ]


def test_a_stuck_flap_counter_hides_flaps_and_fails(tmp_path):
    stuck = {"mlx5_0/ports/1/counters/link_downed": "255"}
    before = sample_ports(fixture_tree(tmp_path / "b", HEALTHY, stuck))
    after = sample_ports(fixture_tree(tmp_path / "a", HEALTHY, stuck))
    failures, _ = judge_change(before, after, "burn-in")
    assert len(failures) == 1 and "stuck at its maximum 255" in failures[0]


def test_a_port_that_vanished_or_a_missing_sample_fails(tmp_path):
    before, after = samples(tmp_path, {})
    del after["ports"]["mlx4_0/2"]
    assert judge_change(before, after, "burn-in")[0] == ["mlx4_0 port 2: gone after the burn-in"]
    assert judge_change(after, before, "job")[0] == ["mlx4_0 port 2: appeared during the job"]
    failures, _ = judge_change({"error": "PermissionError: /sys"}, after, "job")
    assert failures == ["no port counters before the job: PermissionError: /sys"]


def test_a_counter_read_on_one_side_only_is_not_compared(tmp_path):
    before, after = samples(tmp_path, {})
    del after["ports"]["mlx5_0/1"]["counters"]["symbol_error"]
    del before["ports"]["hfi1_0/1"]["counters"]["port_rcv_errors"]
    assert judge_change(before, after, "burn-in") == ([], [])
