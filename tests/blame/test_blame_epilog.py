"""docs/slurm/rigcheck-blame-epilog.sh: blame runs only after a job that left dumps, and the
node is drained only on blame's exit 1 (a machine blamed). `rigcheck blame` and scontrol are
stand-ins here (the blame itself is tested in test_blame_cli.py); the script is the real one."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parents[2] / "docs" / "slurm" / "rigcheck-blame-epilog.sh"
LINE = "rigcheck blame: hung rank 1 on node01 (GPU 3): clock_slowdown: GPU 3: hw_slowdown"


def epilog(tmp_path, blame_code, dumps=True, ras=False):
    etc, bin_, jobs = tmp_path / "etc", tmp_path / "bin", tmp_path / "jobs"
    for folder in (etc, bin_, jobs / "77" / "flight_recorder", jobs / "77" / "ncclras"):
        folder.mkdir(parents=True)
    if dumps:
        (jobs / "77" / "flight_recorder" / "nccl_trace_rank_1").write_bytes(b"x")
    if ras:
        (jobs / "77" / "ncclras" / "20261129T080000.txt").write_text("NCCL version 2.26.2\n")
    shutil.copy(SCRIPT, etc)
    python = bin_ / "python"
    python.write_text(f'#!/bin/sh\necho "$*" > {tmp_path}/blame.args\necho "{LINE}"\n'
                      f"exit {blame_code}\n")  # fmt: skip
    (bin_ / "scontrol").write_text(f'#!/bin/sh\necho "$@" > {tmp_path}/scontrol.args\n')
    for tool in (python, bin_ / "scontrol"):
        tool.chmod(0o755)
    (etc / "rigcheck.env").write_text(f"RIGCHECK_PYTHON={python}\nRIGCHECK_JOB_ROOT={jobs}\n")
    env = {**os.environ, "PATH": f"{bin_}:{os.environ['PATH']}", "SLURM_JOB_ID": "77",
           "SLURMD_NODENAME": "node01"}  # fmt: skip
    done = subprocess.run(["sh", str(etc / SCRIPT.name)], env=env, capture_output=True,
                          text=True, timeout=30)  # fmt: skip
    scontrol = tmp_path / "scontrol.args"
    return done, scontrol.read_text() if scontrol.exists() else None, tmp_path / "blame.args"


def test_a_machine_blamed_drains_this_node_with_the_line(tmp_path):
    done, scontrol, args = epilog(tmp_path, 1)
    assert done.returncode == 0, done.stderr
    assert args.read_text().split() == ["-m", "rigcheck", "blame", str(tmp_path / "jobs/77"),
                                        "--node", "node01"]  # fmt: skip
    assert scontrol.startswith("update NodeName=node01 State=DRAIN Reason=rigcheck: blame: hung")


@pytest.mark.parametrize("code", [0, 2, 3, 4])
def test_anything_but_a_machine_blamed_drains_nothing(tmp_path, code):
    done, scontrol, _ = epilog(tmp_path, code)
    assert done.returncode == 0 and scontrol is None
    assert f"exit {code}" in done.stderr


def test_a_job_that_left_no_dump_is_not_looked_at(tmp_path):
    done, scontrol, args = epilog(tmp_path, 1, dumps=False)
    assert done.returncode == 0 and scontrol is None and not args.exists()


def test_ncclras_answers_alone_are_looked_at(tmp_path):
    done, scontrol, args = epilog(tmp_path, 1, dumps=False, ras=True)
    assert done.returncode == 0 and args.exists()
    assert scontrol.startswith("update NodeName=node01 State=DRAIN")
