"""docs/k8s/rigcheck-blame-job.yaml: its shell marks the node only on blame's exit 1 (a machine
blamed), with stand-ins for `rigcheck` (the shell is the manifest's own); and a real blame
certificate, marked offline, taints the node with the cause under tier `blame`. Its validity
against the API schemas is tests/k8s/test_manifests.py's."""

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml
from test_blame_cli import blame, job, node_facts, slowdown_on

from rigcheck.cli import main

MANIFEST = Path(__file__).parents[2] / "docs" / "k8s" / "rigcheck-blame-job.yaml"


def container():
    (doc,) = [d for d in yaml.safe_load_all(MANIFEST.read_text()) if d]
    return doc["spec"]["template"]["spec"]["containers"][0]


def run_shell(tmp_path, blame_code):
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    stand_in = bin_ / "rigcheck"
    stand_in.write_text(f'#!/bin/sh\necho "$*" >> {tmp_path}/calls\n'
                        f'[ "$1" = blame ] && exit {blame_code}\nexit 0\n')  # fmt: skip
    stand_in.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_}:{os.environ['PATH']}", "NODE_NAME": "gpu07",
           "JOB_DIR": "/jobs/81"}  # fmt: skip
    command = container()["command"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=30)
    return done, (tmp_path / "calls").read_text().splitlines()


def test_a_machine_blamed_marks_its_node_from_the_blame_certificate(tmp_path):
    done, calls = run_shell(tmp_path, 1)
    assert done.returncode == 0, done.stderr
    assert calls == [
        "blame /jobs/81 --node gpu07 --history none",
        "k8s mark --certificate /jobs/81/blame/gpu07 --node gpu07",
    ]


@pytest.mark.parametrize("code", [0, 2, 3, 4])
def test_anything_but_a_machine_blamed_marks_nothing(tmp_path, code):
    done, calls = run_shell(tmp_path, code)
    assert done.returncode == 0 and len(calls) == 1
    assert f"exit {code}" in done.stderr


def test_the_blame_certificate_taints_with_its_cause_under_tier_blame(tmp_path, capsys):
    folder = job(tmp_path, "hung_rank1_of_3", gpu_of_rank="3")
    code, _ = blame(capsys, folder, "--facts", node_facts(tmp_path, "n", slowdown_on(3)))
    assert code == 1
    argv = ["k8s", "mark", "--certificate", str(folder / "blame" / "node01"), "--offline",
            "--node", "node01"]  # fmt: skip
    assert main(argv) == 1
    patch = json.loads(capsys.readouterr().out)
    assert patch["spec"]["taints"] == [
        {"key": "rigcheck.dev/unhealthy", "value": "clock_slowdown", "effect": "NoSchedule"}
    ]
    assert patch["metadata"]["labels"]["rigcheck.dev/tier"] == "blame"
