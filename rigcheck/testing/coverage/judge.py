"""A node judged as `rigcheck check CLASS --tier TIER --facts` judges a snapshot: its facts read by
rigcheck's probes over the simulated library and log, then the packaged suites run in this
process (pytest.main: a subprocess would pay a second of imports per node)."""

from __future__ import annotations

import contextlib
import copy
import functools
import io
import json
import os
import subprocess
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock
from xml.etree import ElementTree

import rigcheck.plugin.core as plugin_core
from rigcheck.facts.kernel_log import reader
from rigcheck.spec import load_all, load_spec
from rigcheck.testing.coverage.amd import amd_facts
from rigcheck.testing.coverage.node import Node, amd_base
from rigcheck.testing.nvml_sim.snapshot import fake_sysfs, simulated_snapshot
from rigcheck.testing.synthetic import synthetic_snapshot

CAMPAIGN_BUDGET_S = 600


@dataclass(frozen=True)
class Judged:
    verdict: str  # "fail" when a check failed, else "pass"
    failed: tuple[str, ...]  # the checks that failed, by name
    seconds: float  # judging time on this machine (the probes' own time on a node not counted)


def driver_generation(version: str) -> str:
    """The simulator's generation for a capture's driver: 'R' and its branch (580.105.08: R580)."""
    return "R" + version.split(".")[0]


def node_snapshot(node: Node, folder: Path) -> dict[str, Any]:
    """The facts rigcheck's probes read from this node: NVML through pynvml, or amdsmi, over the
    simulated library, the kernel log through the real reader; the rest is the class's synthetic
    snapshot. A host node's facts are the recorded ones."""
    machine = node.machine
    if node.family == "host":
        return copy.deepcopy(machine)  # recorded by the real probes: replayed as it was
    if node.family == "amd":
        base = amd_base(node.cls)
        snapshot = amd_facts(base, machine, folder / "sys")
    else:
        base = synthetic_snapshot(load_spec(node.cls), gpus=len(machine["gpus"]))
        driver = driver_generation(machine["driver_version"])
        snapshot, lib = simulated_snapshot(base, machine, driver, fake_sysfs(folder, machine))
        if lib.crashes:
            raise RuntimeError(f"the simulated NVML would have crashed: {lib.crashes}")
    snapshot["kernel_log"] = _kernel_log(node.log_lines, base["kernel_log"]["uptime_s"])
    return snapshot


def _kernel_log(lines: list[str], uptime_s: float) -> dict[str, Any]:
    """The kernel-log facts the reader gives for these lines, as `journalctl -k -b` prints them."""
    text = "\n".join(lines) or "-- No entries --"  # what journalctl prints for an empty boot

    def journalctl(argv: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(argv, 0, stdout=text + "\n", stderr="")

    with mock.patch.object(reader, "_uptime", lambda: uptime_s):
        return reader.probe_kernel_log(journalctl)


@functools.cache
def _specs() -> dict[str, Any]:
    return load_all()


def _specs_read_once() -> dict[str, Any]:
    """The class specs, read and validated once per campaign (a third of a node's judging);
    each node gets its own copy."""
    return copy.deepcopy(_specs())


def judge(node: Node, tier: str, folder: Path) -> Judged:
    """Run the class's suites in `tier` on the node's snapshot; the verdict and failed checks."""
    import pytest

    from rigcheck.check import pytest_args

    folder.mkdir(parents=True, exist_ok=True)
    facts = folder / "facts.json"
    facts.write_text(json.dumps(node_snapshot(node, folder / "sys")))
    junit = folder / "junit.xml"
    # The tier's budget is wall time, from the process's start: a campaign judging node after
    # node in one process would spend it on earlier nodes. What a tier catches is the question
    # here; its time to a verdict is measured (Judged.seconds), not judged. The reports plugin
    # is off: it rewrites the certificate after every check (most of a node's time) and judges
    # nothing; the outcomes come from the JUnit XML.
    args = [node.cls, f"--tier={tier}", f"--tier-budget={CAMPAIGN_BUDGET_S}", f"--facts={facts}",
            f"--junitxml={junit}", "-p", "no:rigcheck.plugin.reports"]  # fmt: skip
    started = time.perf_counter()
    with (
        mock.patch.object(plugin_core, "load_all", _specs_read_once),
        mock.patch.dict(os.environ, {"RIGCHECK_HISTORY": "none"}),
        contextlib.redirect_stdout(io.StringIO()),  # a campaign prints its matrix, not 100 runs
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        code = pytest.main(pytest_args(args))
    seconds = time.perf_counter() - started
    failed = failed_checks(junit)
    if code not in (0, 1) or (code == 1) != bool(failed):
        raise RuntimeError(f"the suites ended with exit code {code} on {facts}: not a verdict")
    return Judged("fail" if failed else "pass", failed, seconds)


def failed_checks(junit: Path) -> tuple[str, ...]:
    """The names of the checks that failed or errored in a run's JUnit XML."""
    cases = ElementTree.parse(junit).getroot().iter("testcase")
    bad = [
        c.get("name", "?")
        for c in cases
        if c.find("failure") is not None or c.find("error") is not None
    ]
    return tuple(sorted(set(bad)))
