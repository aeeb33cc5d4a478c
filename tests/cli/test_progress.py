"""Issue 24: live progress for long steps. The stored tmux capture of `rigcheck check cpu
--burn-in=20s` (fixtures/terminal/) shows the progress moving and ends on the verdict; the
pieces that draw it are tested here without a terminal.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rigcheck.distributed.launch import ranks_so_far
from rigcheck.plugin.burnin import _run_child
from rigcheck.progress import Phase

ROOT = Path(__file__).resolve().parents[2]
CAPTURE = ROOT / "fixtures" / "terminal" / "check-cpu-burn-in-20s.frames.txt"
BURN_IN = "rigcheck: burn-in: every device under load for 20 s"


def frames() -> list[list[str]]:
    text = "\n".join(line for line in CAPTURE.read_text().splitlines() if not line.startswith("#"))
    return [f.splitlines()[1:] for f in re.split(r"^(?==== frame)", text, flags=re.M) if f]


FRAMES = frames()


def test_the_capture_fits_a_100x40_terminal():
    assert len(FRAMES) >= 10
    assert all(len(frame) <= 40 and all(len(line) <= 100 for line in frame) for frame in FRAMES)


def test_the_burn_in_shows_elapsed_and_remaining_time_moving():
    seen = [line for frame in FRAMES for line in frame if line.startswith(BURN_IN)]
    left = [int(m.group(1)) for line in seen if (m := re.search(r"(\d+) s left$", line))]
    elapsed = [m.group(0) for line in seen if (m := re.search(r"\d+:\d\d:\d\d", line))]
    assert len(set(left)) >= 5 and left == sorted(left, reverse=True) and left[-1] == 0
    assert len(set(elapsed)) >= 5


def test_the_collective_job_shows_its_ranks_as_they_report():
    notes = [
        line
        for frame in FRAMES
        for line in frame
        if line.startswith("rigcheck: collective job: 2 ranks over gloo rank 0")
    ]
    stages = [re.search(r"rank 0 (\w+)", line).group(1) for line in notes]
    order = list(dict.fromkeys(stages))
    assert order == ["started", "allreduce", "allgather", "reducescatter", "done"]


def test_each_measurement_is_shown_while_it_runs():
    last = FRAMES[-1]
    for figure in ("device_copy_gbps", "device_triad_gbps", "matmul_bf16_tflops"):
        assert any(line.startswith(f"rigcheck: measuring {figure} on cpu ") for line in last)


def test_the_screen_ends_on_the_verdict_without_the_benchmark_table():
    last = [line for line in FRAMES[-1] if line.strip()]
    assert last[-1] == "EXIT=0"  # the recording shell's line
    assert last[-3].startswith("= rigcheck: verdict WARN (0 failed, 23 passed")
    assert not any("Name (time in" in line for frame in FRAMES for line in frame)


# -- the pieces ---------------------------------------------------------------------------------


def test_a_phase_off_a_terminal_is_one_plain_line():
    out = io.StringIO()
    with Phase("burn-in: every device under load for 20 s", 20, out, live=False) as shown:
        shown.advance("ignored")
    assert out.getvalue() == "rigcheck: burn-in: every device under load for 20 s (20 s)\n"


def test_a_phase_on_a_terminal_redraws_with_time_left():
    out = io.StringIO()
    with Phase("burn-in", 20, out, live=True) as shown:
        shown.advance("rank 0 started")
    text = out.getvalue()
    assert "rigcheck: burn-in rank 0 started" in text and re.search(r"\d+ s left", text)


def test_ranks_so_far_reads_the_progress_files(tmp_path):
    assert ranks_so_far(tmp_path) == "waiting for the ranks"
    progress = tmp_path / "progress"
    progress.mkdir()
    for rank, stage in ((1, "allgather"), (0, "allreduce")):
        (progress / f"node.rank000{rank}.json").write_text(
            json.dumps({"rank": rank, "stage": stage})
        )
    (progress / "node.rank0002.json").write_text('{"rank": 2, "sta')  # mid-write: skipped
    assert ranks_so_far(tmp_path) == "rank 0 allreduce, rank 1 allgather"


def test_the_burn_in_child_is_waited_for_with_its_output():
    ticks = []
    shown = type("Shown", (), {"advance": lambda self, note="": ticks.append(note)})()
    code = "import sys, time; time.sleep(1.2); print('out'); sys.exit(3)"
    done = _run_child([sys.executable, "-c", code], 30, shown)
    assert (done.returncode, done.stdout) == (3, "out\n") and len(ticks) >= 1
    with pytest.raises(subprocess.TimeoutExpired):
        _run_child([sys.executable, "-c", "import time; time.sleep(30)"], 1, shown)
