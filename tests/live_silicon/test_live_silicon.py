"""tools/live_silicon.py on a machine without a GPU: its steps, its folder, its arguments, and
that it only ever queries the GPU. A fake nvidia-smi on PATH stands in for the driver's tool."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "tools" / "live_silicon.py"
# nvidia-smi's read-only queries, written out here rather than imported from the script.
READ_ONLY = {"-q", "-x", "topo", "-m", "nvlink", "-s", "-L"}


def load_script():
    spec = importlib.util.spec_from_file_location("live_silicon", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["live_silicon"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def fake_path(tmp_path):
    """PATH with a fake nvidia-smi (one H100) and nvcc, and no torchrun."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "nvidia-smi").write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "-L" ]; then echo "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)"; exit 0; fi\n'
        'echo "nvidia-smi $*"\n'
    )
    (bin_dir / "nvcc").write_text("#!/bin/sh\necho 'Cuda compilation tools, release 12.4'\n")
    for program in bin_dir.iterdir():
        program.chmod(0o755)
    return f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin"


def run(*args, path=None, out_env=None):
    env = {k: v for k, v in os.environ.items() if k != "OUT"}
    env.update({"PATH": path or env["PATH"], **({"OUT": str(out_env)} if out_env else {})})
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def test_it_lists_every_step_the_issue_names():
    done = run("--list")
    assert done.returncode == 0, done.stderr
    listed = done.stdout.split("\n")
    for step in ("nvidia-smi -q", "nvidia-smi topo -m", "nvcc --version", "collect_env", "facts",
                 "suite", "fidelity", "burn-in", "nccl", "memory jobs"):  # fmt: skip
        assert step in listed, listed


def test_it_only_queries_the_gpu_and_installs_nothing(tmp_path):
    script = load_script()
    for step in script.steps(tmp_path, 8, "h100"):
        if step.argv[0] == "nvidia-smi":
            assert set(step.argv[1:]) <= READ_ONLY, step.argv
        assert "install" not in step.argv, step.argv
    assert (
        "--burn-in=60s"
        in next(s for s in script.steps(tmp_path, 8, "h100") if s.name == "burn-in").argv
    )


def test_the_steps_run_into_one_folder_with_a_manifest(tmp_path, fake_path):
    out = tmp_path / "run"
    only = ["nvidia-smi -q", "nvidia-smi -q -x", "nvcc --version", "nvml symbols", "nccl"]
    done = run(out, "--class", "h100", *[a for s in only for a in ("--only", s)], path=fake_path)
    assert done.returncode == 0, done.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["gpus"] == 1 and manifest["class"] == "h100"
    steps = {s["name"]: s for s in manifest["steps"]}
    assert list(steps) == only
    assert steps["nvidia-smi -q"]["exit_code"] == 0
    assert (out / "env/nvidia-smi-q.txt").read_text() == "nvidia-smi -q\n"
    assert (out / "env/nvidia-smi-q.xml").read_text() == "nvidia-smi -q -x\n"
    assert "release 12.4" in (out / "env/nvcc.txt").read_text()
    assert steps["nccl"]["skipped"] == "not on PATH: torchrun"
    # No libnvidia-ml here: the symbol check got as far as loading it.
    assert steps["nvml symbols"]["exit_code"] == 1
    assert "libnvidia-ml.so.1" in (out / "env/nvml_symbols.json").read_text()


def test_the_memory_jobs_say_why_nothing_ran_without_cuda(tmp_path):
    spec = importlib.util.spec_from_file_location("jobs", REPO / "tools" / "live_silicon_jobs.py")
    jobs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(jobs)
    assert jobs.main(tmp_path / "jobs.json") == 0
    written = json.loads((tmp_path / "jobs.json").read_text())
    assert written == {"skipped": "torch sees no CUDA device"}


def test_out_defaults_to_the_out_variable(tmp_path, fake_path):
    out = tmp_path / "from-env"
    done = run("--class", "cpu", "--only", "uname", path=fake_path, out_env=out)
    assert done.returncode == 0, done.stderr
    assert (out / "env/uname.txt").read_text().strip()


def test_a_folder_holding_an_earlier_run_is_refused(tmp_path, fake_path):
    earlier = tmp_path / "earlier"
    earlier.mkdir()
    (earlier / "old.txt").write_text("earlier\n")
    done = run(earlier, "--class", "cpu", "--only", "uname", path=fake_path)
    assert done.returncode == 2 and "is not empty" in done.stderr
    assert sorted(p.name for p in earlier.iterdir()) == ["old.txt"]


def test_an_unknown_step_is_a_usage_error(tmp_path, fake_path):
    done = run(tmp_path / "x", "--class", "cpu", "--only", "nope", path=fake_path)
    assert done.returncode == 2 and "no such step: nope" in done.stderr


def test_steps_past_the_time_budget_are_recorded_as_skipped(tmp_path, monkeypatch):
    script = load_script()
    monkeypatch.setattr(script, "BUDGET_S", 5)
    monkeypatch.setattr(script, "gpu_count", lambda: 0)
    assert script.main([str(tmp_path / "out"), "--class", "cpu", "--only", "uname"]) == 0
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["steps"] == [
        {"name": "uname", "argv": ["uname", "-a"], "output": "env/uname.txt",
         "skipped": "out of time (5 s budget)"}
    ]  # fmt: skip
