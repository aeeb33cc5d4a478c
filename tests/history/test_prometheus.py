"""`--prometheus-textfile DIR`: node_exporter textfile metrics, read by prometheus_client's own
parser, written atomically, with bounded labels; and end to end, Debian's node_exporter and
prometheus scraping them over loopback, a PromQL query answering with rigcheck's metric."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest
from history_runs import XID_79, node_run, parsed_samples
from history_services import PrometheusStack, wait_for

from rigcheck.history.prometheus_textfile import FILE_NAME, render, write_textfile


@pytest.fixture
def failing_run():
    """The synthetic two-GPU node with Xid 79 on GPU 1, and GPU 0's bf16 matmul below floor."""
    return node_run(
        "node-17", "2026-11-02T10:00:00Z", {("matmul_bf16_tflops", 0): 512.5}, xid_on_gpu1=True
    )


def test_each_check_figure_and_the_run_as_parsed_samples(failing_run):
    certificate, facts = failing_run
    samples = parsed_samples(render(certificate, facts))

    def result(check: str, gpu: str, outcome: str) -> float:
        return samples[
            ("rigcheck_check_result", (("check", check), ("gpu", gpu), ("result", outcome)))
        ]

    assert result("test_no_machine_fault_xids", "1", "fail") == 1  # the GPU its Xid line names
    assert result("test_no_machine_fault_xids", "1", "pass") == 0
    assert result("test_matmul_bf16_tflops[gpu0]", "0", "fail") == 1
    assert result("test_matmul_bf16_tflops[gpu1]", "1", "pass") == 1
    assert result("test_device_count", "", "pass") == 1
    assert samples[("rigcheck_matmul_bf16_tflops", (("device", "gpu0"),))] == 512.5
    assert samples[("rigcheck_hbm_bandwidth_gbps", (("device", "gpu1"),))] == 3000.0
    assert samples[("rigcheck_last_run_verdict", (("verdict", "fail"),))] == 1
    assert samples[("rigcheck_last_run_verdict", (("verdict", "pass"),))] == 0
    finished = dt.datetime.fromisoformat(certificate["run"]["finished_at"].replace("Z", "+00:00"))
    assert samples[("rigcheck_last_run_timestamp_seconds", ())] == finished.timestamp()
    assert samples[("rigcheck_last_run_info", (("class", "h100"), ("tier", "")))] == 1


def test_labels_are_bounded_and_name_no_board(failing_run):
    certificate, facts = failing_run
    text = render(certificate, facts)
    labels = {k for (_, pairs) in parsed_samples(text) for k, _ in pairs}
    assert labels == {"check", "gpu", "result", "device", "verdict", "class", "tier"}
    for secret in ("serial", "uuid", "1652923456781", "GPU-5d1e", certificate["run"]["id"]):
        assert secret not in text
    assert XID_79 not in text  # messages are unbounded text: never a label


def test_a_label_value_with_quotes_and_newlines_is_escaped(failing_run):
    certificate, facts = failing_run
    certificate["checks"][0]["name"] = 'test_x[a"b\\c\nd]'
    samples = parsed_samples(render(certificate, facts))
    key = (("check", 'test_x[a"b\\c\nd]'), ("gpu", ""), ("result", "pass"))
    assert samples[("rigcheck_check_result", key)] == 1


def test_the_file_is_replaced_whole_and_readable_by_another_user(failing_run, tmp_path):
    certificate, facts = failing_run
    (tmp_path / FILE_NAME).write_text("old")
    write_textfile(tmp_path, *failing_run)
    assert [p.name for p in tmp_path.iterdir()] == [FILE_NAME]  # no temporary file left
    assert (tmp_path / FILE_NAME).read_text() == render(certificate, facts)
    assert oct((tmp_path / FILE_NAME).stat().st_mode & 0o777) == "0o644"
    with pytest.raises(OSError):
        write_textfile(tmp_path / "missing", *failing_run)


def test_node_exporter_and_prometheus_serve_rigcheck_s_metrics(failing_run):
    # Not pytest's tmp_path (private to its user); node_exporter may run as another.
    root = Path(tempfile.mkdtemp(prefix="rigcheck-prometheus-"))
    textfiles = root / "textfile"
    textfiles.mkdir()
    os.chmod(root, 0o755)
    stack = PrometheusStack(root, textfiles)
    try:
        write_textfile(textfiles, *failing_run)
        started = time.monotonic()
        stack.start()
        query = 'rigcheck_check_result{check="test_no_machine_fault_xids",result="fail"}'
        wait_for(lambda: stack.query(query), 45, f"{query} in prometheus")
        found = stack.query(query)
        assert [(r["metric"]["gpu"], r["value"][1]) for r in found] == [("1", "1")]
        assert found[0]["metric"]["job"] == "node"
        verdict = stack.query("rigcheck_last_run_verdict == 1")
        assert [r["metric"]["verdict"] for r in verdict] == ["fail"]
        print(f"prometheus answered after {time.monotonic() - started:.1f} s")
    except AssertionError:
        print(stack.logs())
        raise
    finally:
        stack.stop()
        shutil.rmtree(root, ignore_errors=True)


def test_the_run_info_and_the_store_name_the_tier_the_run_was_given(failing_run):
    # The certificate has no tier field: the tier is read from the run's own arguments.
    from rigcheck.history.rows import run_row

    certificate, facts = failing_run
    certificate["run"]["args"] = ["-m", "h100", "--tier", "quick", "-q"]
    samples = parsed_samples(render(certificate, facts))
    assert samples[("rigcheck_last_run_info", (("class", "h100"), ("tier", "quick")))] == 1
    assert run_row(certificate)["tier"] == "quick"
    certificate["run"]["args"] = ["--tier=standard"]
    assert run_row(certificate)["tier"] == "standard"
    certificate["run"]["args"] = ["-m", "h100"]
    assert run_row(certificate)["tier"] is None
