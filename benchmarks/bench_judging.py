"""Judging a replayed H100 node of 8, 32 and 72 GPUs (`rigcheck check h100 --facts F`, facts
from `python -m rigcheck.testing.synthetic h100 --gpus N`), as a user runs it: the certificate
is rewritten after every check, so its cost per check must not grow with the machine (issue 43:
it grew as GPUs³). The time per check is in extra_info; the exponent is of the whole run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rigcheck.spec import load_spec
from rigcheck.testing.synthetic import synthetic_snapshot

SIZES = (8, 32, 72)


def judge(facts: Path, reports: Path) -> float:
    """Seconds for one replayed run; the certificate it left must be final and valid."""
    command = [sys.executable, "-m", "rigcheck", "check", "h100", "--facts", str(facts),
               "--report-dir", str(reports), "-q"]  # fmt: skip
    env = {**os.environ, "RIGCHECK_HISTORY": "none"}
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=3600)
    elapsed = time.perf_counter() - start
    assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-2000:]
    return elapsed


@pytest.mark.parametrize("size", SIZES)
def test_judging(benchmark, size, tmp_path):
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps(synthetic_snapshot(load_spec("h100"), size)))
    runs = iter(range(100))

    def one():
        return (facts, tmp_path / f"reports-{next(runs)}"), {}

    benchmark.group = "judging a replayed H100 node (GPUs)"
    benchmark.pedantic(judge, setup=one, rounds=1, iterations=1)
    certificate = json.loads((tmp_path / "reports-0" / "certificate.json").read_text())
    checks = len(certificate["checks"])
    benchmark.extra_info["checks"] = checks
    benchmark.extra_info["per_check_ms"] = round(benchmark.stats.stats.median / checks * 1000, 1)
    print(f"\n{size} GPUs: {checks} checks, {benchmark.extra_info['per_check_ms']} ms per check")
