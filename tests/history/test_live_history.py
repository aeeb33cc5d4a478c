"""Runs of the suites as a user starts them, keeping history: two live cpu runs read back from the
default store (SQLite in the data folder), a board seen failing before named on the run's last
screen, and a store that cannot be written leaving the verdict and the exit status alone."""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
import sys
from pathlib import Path

from history_runs import REPO, clean_env, live_cpu_run, parsed_samples, rigcheck

H100 = REPO / "fixtures" / "snapshots" / "h100.json"
XID = "xid_79_fallen_off_bus"
BROKEN = {
    v["name"]: v["changes"]
    for v in json.loads((REPO / "fixtures" / "broken_variants.json").read_text())
    if v["name"] == XID
}
UNWRITABLE = "sqlite:////proc/rigcheck-no-such-folder/history.db"  # not even root writes /proc


def replay_h100(tmp: Path, facts: Path, history: str, *args: str) -> subprocess.CompletedProcess:
    """Two fact checks (GPU count, Xid events) replayed on a recorded H100 snapshot (seconds)."""
    command = [
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-m", "h100",
        "-k", "test_device_count or test_no_machine_fault_xids", "--facts", str(facts),
        "--rootdir", str(REPO), "-c", str(REPO / "pyproject.toml"), str(REPO / "suites"), *args,
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
        assert re.search(rf"{re.escape(started)} .* cpu .* live .* pass", shown.stdout), (
            shown.stdout
        )


def variant(tmp: Path, name: str, host: str, broken: str | None = None) -> Path:
    """The recorded H100 under another host name, with one of fixtures/broken_variants.json's
    changes (here: Xid 79 in the kernel log for GPU 0, the board falling off the bus)."""
    facts = json.loads(H100.read_text())
    facts["host"]["hostname"] = host
    # Stands for a snapshot recorded on a machine: synthetic serials are never kept against
    # their GPUs (rigcheck/history/run_hook.py), a recorded one is when --history is given.
    facts["origin"] = {"kind": "recorded", "note": "the synthetic h100 snapshot, as recorded"}
    for change in BROKEN.get(broken, []):
        facts["kernel_log"][change["set"].split(".")[1]] = change["to"]
    path = tmp / name
    path.write_text(json.dumps(facts))
    return path


def test_a_board_seen_failing_elsewhere_is_named_on_the_run_s_last_screen(tmp_path):
    url = f"sqlite:///{tmp_path / 'history.db'}"
    serial = json.loads(H100.read_text())["devices"][0]["serial"]
    asked = ("--history", url)  # a replayed snapshot's GPUs are kept only when asked
    failing = replay_h100(tmp_path / "a", variant(tmp_path, "a.json", "node-17", XID), url, *asked)
    assert failing.returncode == 1 and "Xid 79" in failing.stdout, failing.stdout
    assert "was seen failing" not in failing.stdout
    # The board is moved: the same serial now answers in node-03, which is healthy.
    metrics = tmp_path / "textfile"
    metrics.mkdir()
    moved = variant(tmp_path, "b.json", "node-03")
    run = replay_h100(tmp_path / "b", moved, url, *asked, "--prometheus-textfile", str(metrics))
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    flagged = [line for line in lines if "was seen failing" in line]
    today = dt.datetime.now(dt.timezone.utc).date().isoformat()
    assert len(flagged) == 1, run.stdout
    assert flagged[0].startswith(
        f"rigcheck: GPU 0 (serial masked…{serial[-4:]}) was seen failing on node-17 on "
        f"{today}: Xid 79 x1 on GPU 0 (0000:18:00.0): GPU has fallen off the bus"
    ), flagged
    assert lines.index(flagged[0]) < len(lines) - 1 and "verdict PASS" in lines[-1]
    # The same run's metrics, as node_exporter's textfile collector will read them.
    assert [p.name for p in metrics.iterdir()] == ["rigcheck.prom"]
    samples = parsed_samples((metrics / "rigcheck.prom").read_text())
    assert samples[("rigcheck_last_run_verdict", (("verdict", "pass"),))] == 1
    assert samples[("rigcheck_last_run_info", (("class", "h100"), ("tier", "")))] == 1
    key = (("check", "test_no_machine_fault_xids"), ("gpu", ""), ("result", "pass"))
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
    verdict = run.stdout.splitlines()[-1]  # the root cause sits between verdict and counts
    assert "verdict FAIL: device_count" in verdict
    assert "(1 failed, 0 passed, 1 not applicable; nothing measured)" in verdict
    certificate = json.loads(next((tmp_path / "reports").glob("*/certificate.json")).read_text())
    assert certificate["verdict"] == "fail" and certificate["exit_status"] == 1
