"""`rigcheck diff` on the two committed certificates of one node, before and after an image."""

import argparse
import copy
import json
import shutil
from pathlib import Path

import pytest

from rigcheck.cli import main
from rigcheck.reports.certificate import load_certificate
from rigcheck.reports.cli import parse_noise
from rigcheck.reports.diff import compare, fact_changes

CERTIFICATES = Path(__file__).resolve().parents[2] / "fixtures" / "certificates"
BEFORE, AFTER = CERTIFICATES / "h100-node-before.json", CERTIFICATES / "h100-node-after.json"


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # rich wraps table cells at the terminal's width


def row(out: str, key: str) -> list[str]:
    """The cells of the table row that starts with `key` (mark column dropped)."""
    line = next(line for line in out.splitlines() if f" {key} " in line)
    return [cell.strip() for cell in line.split("│")[2:-1]]


def test_diff_shows_changed_facts_moved_figures_and_changed_verdicts(capsys):
    assert main(["diff", str(BEFORE), str(AFTER)]) == 1
    out = capsys.readouterr().out
    assert row(out, "software.nvidia_driver.version") == [
        "software.nvidia_driver.version", "550.54.15", "525.60.13", "",
    ]  # fmt: skip
    assert row(out, "matmul_bf16_tflops gpu1")[1:] == [
        "726.0 TFLOP/s", "571.2 TFLOP/s", "-21.3% (lower; noise ±5%)",
    ]  # fmt: skip
    verdict = row(out, "suites/facts/test_software_stack.py::test_driver_meets_class_minimum")
    assert verdict[1:3] == ["pass", "fail"] and verdict[3].startswith("driver 525.60.13 is older")
    assert "3 figures moved within their noise" in out
    assert "6 differences that matter (1 run, 2 facts, 1 figures, 2 verdicts)" in out


def test_all_lists_the_figures_within_noise(capsys):
    main(["diff", "--all", str(BEFORE), str(AFTER)])
    assert row(capsys.readouterr().out, "hbm_bandwidth_gbps gpu0")[1:] == [
        "2,951.0 GB/s", "3,001.0 GB/s", "+1.7%, within noise (±5%)",
    ]  # fmt: skip


def test_a_certificate_against_itself_is_no_difference(capsys, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(BEFORE, run / "certificate.json")
    assert main(["diff", str(BEFORE), str(run)]) == 0  # a run folder works as well as a file
    assert "no difference that matters" in capsys.readouterr().out


def test_noise_can_be_widened_globally_or_per_figure():
    a, b = load_certificate(BEFORE), load_certificate(AFTER)
    moved = [c for c in compare(a, b) if c.kind == "figure" and c.matters]
    assert [c.key for c in moved] == ["matmul_bf16_tflops gpu1"]
    assert not [c for c in compare(a, b, noise=0.25) if c.kind == "figure" and c.matters]
    for check in b["checks"]:
        for figure in check["figures"]:
            figure["noise"] = 0.3  # a figure whose measurement says it is this noisy
    assert not [c for c in compare(a, b) if c.kind == "figure" and c.matters]


def test_volatile_facts_are_not_differences():
    a = load_certificate(BEFORE)["machine"]
    b = copy.deepcopy(a)
    b["devices"][0]["temperature_c"] = 80
    b["origin"]["collected_at"] = "later"
    assert fact_changes(a, b) == []
    b["devices"][1]["serial"] = "masked…9999"  # a board swapped
    assert [c.key for c in fact_changes(a, b)] == ["devices.1.serial"]


def test_a_partial_certificate_is_a_difference(capsys, tmp_path):
    partial = json.loads(BEFORE.read_text())
    partial.update(partial=True, partial_reason="interrupted (Ctrl-C / SIGINT) after 3 of 7")
    path = tmp_path / "partial.json"
    path.write_text(json.dumps(partial))
    assert main(["diff", str(BEFORE), str(path)]) == 1
    assert "B is partial" in capsys.readouterr().out


@pytest.mark.parametrize(("text", "value"), [("5%", 0.05), ("0.1", 0.1), ("12.5%", 0.125)])
def test_parse_noise(text, value):
    assert parse_noise(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["lots", "150%", "-0.1"])
def test_parse_noise_refuses_nonsense(text):
    with pytest.raises(argparse.ArgumentTypeError):
        parse_noise(text)


def test_report_rerenders_the_page(tmp_path, capsys):
    shutil.copy(AFTER, tmp_path / "certificate.json")
    assert main(["report", str(tmp_path)]) == 0
    page = (tmp_path / "report.html").read_text()
    assert "DOES NOT CONFORM" in page and page.count('<svg class="plot"') == 2
    # self-contained: no script, and nothing fetched (the SVG namespace is a name, not a fetch)
    assert "<script" not in page
    assert "http" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert f"wrote {tmp_path / 'report.html'}: fail" in capsys.readouterr().err


def test_a_broken_certificate_is_an_error_not_a_traceback(tmp_path, capsys):
    (tmp_path / "certificate.json").write_text('{"verdict": "pass"}')
    assert main(["report", str(tmp_path)]) == 2
    assert "not a valid certificate" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["diff", "report"])
def test_help_renders(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    assert "certificate" in capsys.readouterr().out
