"""Check rigcheck against a real NVIDIA GPU machine: one command, one folder, under 10 minutes.

    python tools/live_silicon.py [OUT]        # OUT defaults to $OUT, else ./live-silicon-<time>

Run it from a clone, with the machine's own Python, torch and CUDA: it installs nothing and
changes no GPU setting (every nvidia-smi call is a query). It writes into OUT:

    manifest.json             every step: its command, exit code, seconds, files; why one skipped
    env/                      nvidia-smi -q (text and XML), topo -m, nvlink -s, nvcc --version,
                              python -m torch.utils.collect_env, pip list, uname -a
    facts.json                rigcheck facts (what the probes read), and `rigcheck detect`
    suite/                    the whole suite, live (--gpus N), with its report folder, junit and
                              recorded measurements (--record-measurements)
    fidelity.json             the fidelity benchmark: the suite's matmul and copy beside a plain
                              torch shape sweep and copy
    burnin/                   a 60 s burn-in and its trace
    nccl/                     the single-node torchrun NCCL job's raw results, then judged
    jobs.json                 torch.cuda.max_memory_allocated of three small real jobs beside
                              what `rigcheck fit` says for each (tools/live_silicon_jobs.py)

Whoever has the GPU sends the folder back; the XML goes through
rigcheck/testing/nvml_sim/make_profiles.py
into a profile, the facts and measurements into fixtures. A step that fails is recorded and the
next one runs; steps left when the time budget runs out are recorded as skipped.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUDGET_S = 570  # the whole run, under 10 minutes with margin
# Every nvidia-smi call is one of these queries (tests/live_silicon checks it): never -pm, -pl,
# -ac, -lgc, -r or any other setting.
NVIDIA_SMI_QUERIES = {
    "nvidia-smi-q.txt": ["-q"],
    "nvidia-smi-q.xml": ["-q", "-x"],
    "nvidia-smi-topo-m.txt": ["topo", "-m"],
    "nvidia-smi-nvlink-s.txt": ["nvlink", "-s"],
    "nvidia-smi-L.txt": ["-L"],
}


NVML_SYMBOLS = """
import ctypes, json
from rigcheck.testing.nvml_sim.library import SYMBOLS
lib = ctypes.CDLL('libnvidia-ml.so.1')
print(json.dumps({name: hasattr(lib, name) for name in sorted(SYMBOLS)}, indent=1))
"""


@dataclass
class Step:
    name: str
    argv: list[str]
    timeout_s: int
    stdout: str  # file under OUT for the output
    needs: list[str] = field(default_factory=list)  # programs that must exist


def steps(out: Path, gpus: int, marker: str) -> list[Step]:
    py = sys.executable
    env_steps = [
        Step(f"nvidia-smi {' '.join(q)}", ["nvidia-smi", *q], 60, f"env/{name}", ["nvidia-smi"])
        for name, q in NVIDIA_SMI_QUERIES.items()
    ]
    suite = out / "suite"
    return [
        *env_steps,
        Step("nvcc --version", ["nvcc", "--version"], 30, "env/nvcc.txt", ["nvcc"]),
        Step("collect_env", [py, "-m", "torch.utils.collect_env"], 120, "env/collect_env.txt"),
        Step("pip list", [py, "-m", "pip", "list"], 60, "env/pip_list.txt"),
        Step("uname", ["uname", "-a"], 10, "env/uname.txt", ["uname"]),
        # Which NVML symbols this driver exports: what
        # rigcheck/testing/nvml_sim/profiles/drivers.json
        # says per generation, checked (a dlsym per name, nothing called).
        Step("nvml symbols", [py, "-c", NVML_SYMBOLS], 30, "env/nvml_symbols.json"),
        Step("detect", [py, "-m", "rigcheck.cli", "detect"], 120, "detect.txt"),
        Step("facts", [py, "-m", "rigcheck.cli", "facts", "-o", str(out / "facts.json")], 180,
             "facts.log"),
        Step("suite", [py, "-m", "pytest", "-m", marker, "--gpus", str(gpus), "-p",
                       "no:cacheprovider", f"--report-dir={suite / 'report'}",
                       f"--junitxml={suite / 'junit.xml'}",
                       f"--record-measurements={suite / 'measurements.json'}"], 300,
             "suite/pytest.txt"),
        Step("fidelity", [py, "-m", "rigcheck.measure.fidelity", "--runs", "3", "--no-suite",
                          "--json", str(out / "fidelity.json")], 150, "fidelity.txt"),
        Step("burn-in", [py, "-m", "pytest", "-m", f"{marker} and burn_in", "--gpus", str(gpus),
                         "--burn-in=60s", "-p", "no:cacheprovider",
                         f"--report-dir={out / 'burnin' / 'report'}"], 150, "burnin/pytest.txt"),
        Step("nccl", ["torchrun", "--standalone", f"--nproc_per_node={gpus}", "-m",
                      "rigcheck.distributed.worker", f"--report-dir={out / 'nccl' / 'results'}"],
             120, "nccl/torchrun.txt", ["torchrun"]),
        Step("nccl judged", [py, "-m", "pytest", "-m", f"{marker} and distributed", "--gpus",
                             str(gpus), f"--collectives={out / 'nccl' / 'results'}", "-p",
                             "no:cacheprovider", f"--report-dir={out / 'nccl' / 'report'}"], 60,
             "nccl/pytest.txt"),
        Step("memory jobs", [py, str(REPO / "tools" / "live_silicon_jobs.py"),
                             str(out / "jobs.json")], 180, "jobs.txt"),
    ]  # fmt: skip


def run_step(step: Step, out: Path, deadline: float) -> dict:
    record = {"name": step.name, "argv": step.argv, "output": step.stdout}
    missing = [p for p in step.needs if shutil.which(p) is None]
    left = deadline - time.monotonic()
    if missing:
        return {**record, "skipped": f"not on PATH: {', '.join(missing)}"}
    if left < 10:
        return {**record, "skipped": f"out of time ({BUDGET_S} s budget)"}
    target = out / step.stdout
    target.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    try:
        with target.open("w") as sink:
            done = subprocess.run(step.argv, cwd=REPO, stdout=sink, stderr=subprocess.STDOUT,
                                  timeout=min(step.timeout_s, left), check=False)  # fmt: skip
        record["exit_code"] = done.returncode
    except subprocess.TimeoutExpired:
        record["exit_code"] = None
        record["timed_out"] = True
    except OSError as exc:
        record["exit_code"] = None
        record["error"] = f"{type(exc).__name__}: {exc}"
    record["seconds"] = round(time.monotonic() - started, 1)
    return record


def gpu_count() -> int:
    """NVIDIA GPUs nvidia-smi lists; 0 when it is missing or fails."""
    if shutil.which("nvidia-smi") is None:
        return 0
    try:
        listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return sum(line.startswith("GPU ") for line in listed.stdout.splitlines())


def detected_marker() -> str:
    """The class `rigcheck detect` names (its first line), else "cpu"."""
    try:
        done = subprocess.run([sys.executable, "-m", "rigcheck.cli", "detect"], cwd=REPO,
                              capture_output=True, text=True, timeout=120)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return "cpu"
    first = done.stdout.strip().splitlines()[:1]
    return first[0].split()[0] if first else "cpu"


def output_folder(given: str | None) -> Path:
    if given:
        return Path(given)
    if os.environ.get("OUT"):
        return Path(os.environ["OUT"])
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return Path.cwd() / f"live-silicon-{stamp}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", help="the folder to fill (default $OUT)")
    parser.add_argument("--only", action="append", metavar="STEP", help="run only these steps")
    parser.add_argument("--list", action="store_true", help="print the steps and exit")
    parser.add_argument("--class", dest="marker", help="the class marker (default: detected)")
    args = parser.parse_args(argv)
    out = output_folder(args.out)
    if args.list:
        print("\n".join(s.name for s in steps(out, 1, args.marker or "CLASS")))
        return 0
    gpus = gpu_count()
    marker = args.marker or detected_marker()
    plan = steps(out, max(gpus, 1), marker)
    unknown = set(args.only or []) - {s.name for s in plan}
    if unknown:
        parser.error(f"no such step: {', '.join(sorted(unknown))} (see --list)")
    if out.exists() and any(out.iterdir()):
        parser.error(f"{out} is not empty: give a new folder, so no earlier run is mixed in")
    out.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + BUDGET_S
    manifest = {"started": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                "class": marker, "gpus": gpus, "python": sys.executable, "steps": []}  # fmt: skip
    for step in plan:
        if args.only and step.name not in args.only:
            continue
        manifest["steps"].append(run_step(step, out, deadline))
        (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
        print(f"{step.name}: {_outcome(manifest['steps'][-1])}", flush=True)
    if gpus == 0:
        print("no NVIDIA GPU found (nvidia-smi -L): the folder holds what ran without one")
    return 0


def _outcome(record: dict) -> str:
    if "skipped" in record:
        return f"skipped ({record['skipped']})"
    if record.get("timed_out"):
        return f"timed out after {record['seconds']} s"
    return f"exit {record.get('exit_code')} in {record.get('seconds')} s"


if __name__ == "__main__":
    sys.exit(main())
