"""Where runs go: reports/<UTC time>-<short host>/, a fresh folder for each run."""

import datetime as dt

from rigcheck.reports.location import make_run_dir, reports_root, run_name

WHEN = dt.datetime(2026, 11, 22, 3, 14, 25, tzinfo=dt.timezone(dt.timedelta(hours=2)))


def test_run_name_is_utc_time_and_short_host():
    assert run_name(WHEN, "gpu-node-07.cluster.example.com") == "20261122T011425Z-gpu-node-07"
    assert run_name(WHEN, "weird host/name") == "20261122T011425Z-weird-host-name"


def test_two_runs_in_one_second_get_two_folders(tmp_path):
    first = make_run_dir(tmp_path / "reports", "20261122T011425Z-node")
    second = make_run_dir(tmp_path / "reports", "20261122T011425Z-node")
    assert (first.name, second.name) == ("20261122T011425Z-node", "20261122T011425Z-node-2")


def test_the_root_is_the_env_or_the_checkouts_reports(tmp_path, monkeypatch):
    monkeypatch.delenv("RIGCHECK_REPORT_DIR", raising=False)
    assert reports_root(tmp_path) == tmp_path / "reports"
    monkeypatch.setenv("RIGCHECK_REPORT_DIR", str(tmp_path / "elsewhere"))
    assert reports_root(tmp_path) == tmp_path / "elsewhere"
