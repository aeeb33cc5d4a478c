"""Time `rigcheck facts` against `python -m torch.utils.collect_env`, side by side.

    python tools/facts_timing.py              # 7 interleaved rounds, this interpreter
    python tools/facts_timing.py --rounds 11

Issue 12 asks that `rigcheck facts` take at most 1.2 x the wall time of torch's own
environment report on the same machine. The two commands run in alternating order, round
after round, so a burst of load from elsewhere hits both alike; the medians are compared.
Wall time is the target; CPU time (user + system of the command and every process it
started) is printed too, since on a shared machine it moves less with other people's load.
Each command's first run is a warm-up (file cache, .pyc files) and is not counted.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_RATIO = 1.2


def commands(python: str) -> dict[str, list[str]]:
    return {
        "rigcheck facts": [python, "-m", "rigcheck", "facts"],
        "collect_env": [python, "-m", "torch.utils.collect_env"],
    }


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of it and its children); raises if the command failed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        tail = result.stderr.strip().splitlines()[-3:]
        raise SystemExit(f"{' '.join(argv)} exited {result.returncode}: {' | '.join(tail)}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (default 7)")
    parser.add_argument("--python", default=sys.executable, help="interpreter with torch")
    args = parser.parse_args(argv)
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    cmds = commands(args.python)
    for argv_ in cmds.values():
        timed(argv_, env)  # warm-up, not counted
    walls: dict[str, list[float]] = {name: [] for name in cmds}
    cpus: dict[str, list[float]] = {name: [] for name in cmds}
    loads = [os.getloadavg()[0]]
    for i in range(args.rounds):
        order = list(cmds) if i % 2 == 0 else list(reversed(cmds))  # neither always goes first
        for name in order:
            wall, cpu = timed(cmds[name], env)
            walls[name].append(wall)
            cpus[name].append(cpu)
        loads.append(os.getloadavg()[0])
    print(f"{args.rounds} interleaved rounds on {os.cpu_count()} CPUs, "
          f"1-min load average {min(loads):.2f}..{max(loads):.2f}")  # fmt: skip
    for name in cmds:
        w, c = walls[name], cpus[name]
        spread = f"min {min(w):.2f}, max {max(w):.2f}"
        median_cpu = statistics.median(c)
        print(f"  {name:15} wall median {statistics.median(w):.2f} s ({spread}); "
              f"CPU median {median_cpu:.2f} s")  # fmt: skip
    facts, ref = (statistics.median(walls[n]) for n in cmds)
    cpu_ratio = statistics.median(cpus["rigcheck facts"]) / statistics.median(cpus["collect_env"])
    verdict = "within" if facts / ref <= TARGET_RATIO else "OVER"
    print(f"  wall ratio {facts / ref:.2f} ({verdict} the {TARGET_RATIO} target); "
          f"CPU ratio {cpu_ratio:.2f}")  # fmt: skip
    return 0 if facts / ref <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
