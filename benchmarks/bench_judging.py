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


def checks_for(facts: dict, count: int) -> list[dict]:
    """`count` checks shaped as the suites record them, each naming a GPU's serial."""
    serials = [d["serial"] for d in facts["devices"]]
    return [
        {"id": f"suites/facts/test_x.py::test_x[gpu{i}]", "name": f"test_x[gpu{i}]",
         "area": "facts", "file": "suites/facts/test_x.py", "line": 1, "outcome": "pass",
         "phase": None, "message": f"serial {serials[i % len(serials)]} as expected",
         "detail": None, "duration_s": 0.01, "warnings": [], "figures": []}
        for i in range(count)
    ]  # fmt: skip


def rewrite_after_each_check(facts: dict, count: int, folder: Path, live: bool) -> None:
    """What the session does while a run goes: append a check, write the certificate (live:
    rigcheck.reports.live_certificate; else the whole document, masked and dumped, each time)."""
    from types import SimpleNamespace

    from rigcheck.facts import Facts
    from rigcheck.reports import certificate as cert
    from rigcheck.reports.live_certificate import LiveCertificate

    target = SimpleNamespace(spec=load_spec("h100"), how="named", facts=Facts(facts))
    every = checks_for(facts, count)
    checks: list[dict] = []
    run = {"id": "r", "started_at": "2026-11-29T05:00:00Z", "args": [], "report_dir": "r"}
    common = dict(run=run, target=target, selected=[c["id"] for c in every], exit_status=None,
                  partial_reason="run in progress")  # fmt: skip
    writer = LiveCertificate(
        folder, cert.build_certificate(**common, checks=[], mask_here=False), facts, False
    )
    for check in every:
        checks.append(check)
        if live:
            writer.write(checks, "run in progress")
        else:
            cert.write_certificate(
                folder / cert.FILE_NAME, cert.build_certificate(**common, checks=checks)
            )


@pytest.mark.parametrize("live", [True, False], ids=["live", "whole_document"])
@pytest.mark.parametrize("size", SIZES)
def test_certificate_rewrites(benchmark, size, live, tmp_path):
    """The writes alone, checks as a real replay makes them (8 GPUs: 219, 32: 507; 12 per
    GPU + 123). The whole-document way (every rewrite masks and dumps all, the final write's
    way) runs at 8 and 32 GPUs only: at 72 it takes minutes."""
    if not live and size > 32:
        pytest.skip("the whole-document way at 72 GPUs takes minutes")
    facts = synthetic_snapshot(load_spec("h100"), size)
    count = 12 * size + 123
    benchmark.group = f"certificate writes ({'live' if live else 'whole document'})"
    args = (facts, count, tmp_path, live)
    benchmark.pedantic(rewrite_after_each_check, args=args, rounds=1, iterations=1)
    per = benchmark.stats.stats.median / count * 1000
    benchmark.extra_info["per_check_ms"] = round(per, 2)
    print(f"\n{size} GPUs, {count} checks: {per:.2f} ms per check")
