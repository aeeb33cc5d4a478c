"""Runs of the suites as a user starts them, keeping history: two live cpu runs read back from the
default store (SQLite in the data folder), a board seen failing before named on the run's last
screen, and a store that cannot be written leaving the verdict and the exit status alone."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from history_runs import REPO, clean_env, live_cpu_run, node_run, parsed_samples, rigcheck

from rigcheck.history.run_hook import remember_run

H100 = REPO / "fixtures" / "snapshots" / "h100.json"
UNWRITABLE = "sqlite:////proc/rigcheck-no-such-folder/history.db"  # not even root writes /proc


def replay_h100(tmp: Path, facts: Path, history: str, *args: str) -> subprocess.CompletedProcess:
    """The fact suite's GPU count check replayed on a recorded H100 snapshot (a few seconds)."""
    command = [
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-m", "h100", "-k",
        "test_device_count", "--facts", str(facts), "--rootdir", str(REPO), "-c",
        str(REPO / "pyproject.toml"), str(REPO / "suites"), *args,
    ]  # fmt: skip
    tmp.mkdir(exist_ok=True)
    env = {**clean_env(), "RIGCHECK_REPORT_DIR": str(tmp / "reports"), "RIGCHECK_HISTORY": history}
    return subprocess.run(command, cwd=tmp, env=env, capture_output=True, text=True, timeout=240)


def test_two_live_cpu_runs_appear_in_history_from_the_default_store(tmp_path):
    data = tmp_path / "data"
    for _ in range(2):
        run = live_cpu_run(tmp_path, XDG_DATA_HOME=str(data))
        assert run.returncode == 0, run.stdout + run.stderr
        assert "history not kept" not in run.stdout
    assert (data / "rigcheck" / "history.db").is_file()  # the default: $XDG_DATA_HOME/rigcheck
    shown = rigcheck("history", XDG_DATA_HOME=str(data))
    assert shown.returncode == 0, shown.stderr
    assert "every run: 2 runs" in shown.stdout
    certificates = sorted((tmp_path / "reports").glob("*/certificate.json"))
    assert len(certificates) == 2
    for file in certificates:
        certificate = json.loads(file.read_text())
        started = certificate["run"]["started_at"]
        assert re.search(rf"{re.escape(started)} .* cpu .* pass", shown.stdout), shown.stdout


def test_a_board_seen_failing_elsewhere_is_named_on_the_run_s_last_screen(tmp_path):
    url = f"sqlite:///{tmp_path / 'history.db'}"
    serial = json.loads(H100.read_text())["devices"][0]["serial"]
    # That board failed as GPU 1 of node-17 (Xid 79), and now sits in the recorded H100.
    failing = node_run(
        "node-17", "2026-11-02T10:00:00Z", serials=("999003", serial), xid_on_gpu1=True
    )
    remember_run(url, *failing)
    metrics = tmp_path / "textfile"
    metrics.mkdir()
    run = replay_h100(tmp_path, H100, url, "--prometheus-textfile", str(metrics))
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    flagged = [line for line in lines if "was seen failing" in line]
    assert flagged == [
        f"rigcheck: GPU 0 (serial masked…{serial[-4:]}) was seen failing on node-17 on "
        "2026-11-02: Xid 79 on 0000:28:00.0: GPU has fallen off the bus. Drain the node and "
        "reseat the GPU."
    ]
    assert lines.index(flagged[0]) < len(lines) - 1 and "verdict PASS" in lines[-1]
    # The same run's metrics, as node_exporter's textfile collector will read them.
    assert [p.name for p in metrics.iterdir()] == ["rigcheck.prom"]
    samples = parsed_samples((metrics / "rigcheck.prom").read_text())
    assert samples[("rigcheck_last_run_verdict", (("verdict", "pass"),))] == 1
    assert samples[("rigcheck_last_run_info", (("class", "h100"), ("tier", "")))] == 1
    key = (("check", "test_device_count"), ("gpu", ""), ("result", "pass"))
    assert samples[("rigcheck_check_result", key)] == 1


def test_an_unwritable_store_leaves_verdict_and_exit_status_with_one_warning_line(tmp_path):
    broken = json.loads(H100.read_text())
    broken["devices"] = []  # the class wants its GPU: this run fails on the count, exit 1
    facts = tmp_path / "no-gpu.json"
    facts.write_text(json.dumps(broken))
    run = replay_h100(tmp_path, facts, UNWRITABLE)
    assert run.returncode == 1, run.stdout + run.stderr
    lines = (run.stdout + run.stderr).splitlines()
    warnings = [line for line in lines if "history" in line]
    assert len(warnings) == 1 and warnings[0].startswith("rigcheck: history not kept: "), warnings
    assert "/proc/rigcheck-no-such-folder/history.db" in warnings[0]
    assert "verdict FAIL (1 failed, 0 passed" in run.stdout.splitlines()[-1]
    certificate = json.loads(next((tmp_path / "reports").glob("*/certificate.json")).read_text())
    assert certificate["verdict"] == "fail" and certificate["exit_status"] == 1
