"""Trends: a figure drifting beyond its spec's warning band against its own history is a warning
with the slope and the dates; noise inside the band, a rise, or a short history is not."""

from __future__ import annotations

import pytest
from history_runs import node_run

from rigcheck.cli import main
from rigcheck.history.run_hook import remember_run
from rigcheck.history.trends import Point, drift, slope_per_day, spec_bands

WEEKLY = [f"2026-10-{day:02d}T09:00:00Z" for day in (1, 8, 15, 22, 29)]


def points(values: list[float]) -> list[Point]:
    return [Point(at, v) for at, v in zip(WEEKLY, values, strict=True)]


def test_slope_is_least_squares_per_day():
    assert slope_per_day(points([900, 893, 886, 879, 872])) == pytest.approx(-1.0)
    assert slope_per_day(points([1, 1, 1, 1, 1])) == 0
    same_time = [Point(WEEKLY[0], 1.0), Point(WEEKLY[0], 5.0)]
    assert slope_per_day(same_time) == 0.0


def test_a_decline_past_the_band_warns_with_slope_and_dates():
    series = points([900, 896, 890, 884, 790])
    found = drift("node-07", "matmul_bf16_tflops gpu1", "TFLOP/s", series, 0.1)
    assert found is not None
    assert found.baseline == 893 and found.latest == 790
    assert found.slope_per_day == pytest.approx(slope_per_day(series))
    assert found.text() == (
        "node-07: matmul_bf16_tflops gpu1 drifted 12% below its own median 893 TFLOP/s "
        f"(band 10%): 790 TFLOP/s now, slope {found.slope_per_day:+,.3g} TFLOP/s/day from "
        "2026-10-01 to 2026-10-29 (5 runs)"
    )
    assert found.slope_per_day < -2


@pytest.mark.parametrize(
    ("values", "band", "why"),
    [
        ([900, 896, 890, 884, 803.8], 0.1, "exactly at the band's edge (893 x 0.9 = 803.7)"),
        ([900, 896, 890, 884, 810], 0.1, "9% below: inside the band"),
        ([500, 700, 800, 1000, 650], 0.1, "13% below the median, but the series rises overall"),
        ([900, 896, 890, 884, 840], 0.05, "inside a 5% band? no: 6% below, so it warns"),
    ],
)
def test_the_band_and_the_slope_both_decide(values, band, why):
    found = drift("n", "f", "u", points(values), band)
    assert (found is not None) == ("warns" in why), why


def test_two_runs_are_not_a_history():
    assert drift("n", "f", "u", points([900, 800, 700, 600, 500])[:2], 0.1) is None
    assert drift("n", "f", "u", points([900, 800, 700, 600, 500])[:3], 0.1) is not None


def test_a_zero_baseline_is_not_divided_by():
    assert drift("n", "f", "u", points([0, 0, 0, 0, -1]), 0.1) is None


def test_the_band_is_the_spec_s_warn_band():
    bands = spec_bands({"cpu"})
    assert bands["allreduce_busbw_gbps"] == 0.1  # expected/cpu.json states it
    assert spec_bands({"no-such-class"}) == {}


def test_history_warns_when_one_gpu_drifts_week_after_week(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "250")
    url = f"sqlite:///{tmp_path / 'history.db'}"
    for at, value in zip(WEEKLY, (900.0, 896.0, 890.0, 884.0, 790.0), strict=True):
        remember_run(url, *node_run("node-07", at, {("matmul_bf16_tflops", 1): value}))
    assert main(["history", "node-07", "--history", url]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "drift: node-07: matmul_bf16_tflops gpu1 drifted 12% below its own median 893" in out
    assert "from 2026-10-01 to 2026-10-29 (5 runs)" in out
    assert "gpu0 drifted" not in out and "hbm_bandwidth_gbps" + " gpu1 drifted" not in out


def test_the_run_that_drifts_says_so_on_its_last_screen(tmp_path):
    url = f"sqlite:///{tmp_path / 'history.db'}"
    lines = []
    for at, value in zip(WEEKLY, (900.0, 896.0, 890.0, 884.0, 790.0), strict=True):
        lines = remember_run(url, *node_run("node-07", at, {("matmul_bf16_tflops", 1): value}))
    assert len(lines) == 1 and lines[0][0] == "yellow"
    assert lines[0][1].startswith("drift: node-07: matmul_bf16_tflops gpu1 drifted 12% below")
    # Another node's history is its own: a first run there has nothing to drift from.
    assert remember_run(url, *node_run("node-08", WEEKLY[-1], {("matmul_bf16_tflops", 1): 1})) == []
