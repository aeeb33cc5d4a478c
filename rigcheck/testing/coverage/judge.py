"""A node judged as `rigcheck check CLASS --tier TIER --facts` judges a snapshot: its facts read by
rigcheck's probes over the simulated library and log, then the packaged suites run in this
process (pytest.main: a subprocess would pay a second of imports per node)."""

from __future__ import annotations

import contextlib
import copy
import functools
import importlib.metadata
import io
import json
import os
import pickle
import random
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
from rigcheck.platforms import load_platforms
from rigcheck.spec import load_all, load_spec
from rigcheck.testing.coverage import acceptance, fabric
from rigcheck.testing.coverage.amd import amd_facts
from rigcheck.testing.coverage.measurements import replay_file
from rigcheck.testing.coverage.node import Node, amd_base
from rigcheck.testing.nvml_sim.snapshot import fake_sysfs, simulated_snapshot
from rigcheck.testing.plugin_scan import narrowed
from rigcheck.testing.synthetic import synthetic_snapshot

CAMPAIGN_BUDGET_S = 600


@dataclass(frozen=True)
class Judged:
    verdict: str  # "fail" when a check failed, else "pass"
    failed: tuple[str, ...]  # the checks that failed, by name
    seconds: float  # judging time on this machine (the probes' own time on a node not counted)
    unjudged: tuple[str, ...] = ()  # figures the class's replay file lacks (NO_FIGURE)


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
        base = _synthetic(node.cls, len(machine["gpus"]))
        driver = driver_generation(machine["driver_version"])
        snapshot, lib = simulated_snapshot(base, machine, driver, fake_sysfs(folder, machine))
        if lib.crashes:
            raise RuntimeError(f"the simulated NVML would have crashed: {lib.crashes}")
    snapshot["kernel_log"] = _kernel_log(node.log_lines, base["kernel_log"]["uptime_s"])
    if node.fabric:  # its /sys/class/infiniband read by the fabric probe
        snapshot["fabric"] = fabric.fabric_facts(node.fabric, snapshot["devices"], folder / "root")
    return snapshot


@functools.cache
def _synthetic_once(cls: str, gpus: int) -> bytes:
    return pickle.dumps(synthetic_snapshot(load_spec(cls), gpus=gpus))


def _synthetic(cls: str, gpus: int) -> dict[str, Any]:
    """The class's synthetic snapshot of this many GPUs: made once, a fresh copy per node."""
    return pickle.loads(_synthetic_once(cls, gpus))


def _kernel_log(lines: list[str], uptime_s: float) -> dict[str, Any]:
    """The kernel-log facts the reader gives for these lines, as `journalctl -k -b` prints them."""
    text = "\n".join(lines) or "-- No entries --"  # what journalctl prints for an empty boot

    def journalctl(argv: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(argv, 0, stdout=text + "\n", stderr="")

    with mock.patch.object(reader, "_uptime", lambda: uptime_s):
        return reader.probe_kernel_log(journalctl)


@functools.cache
def _specs() -> bytes:
    return pickle.dumps(load_all())


def _specs_read_once() -> dict[str, Any]:
    """The class specs, read once per campaign (0.04 s a node once rigcheck.spec has judged each
    file against the schema, 0.72 s the first time);
    each node gets its own copy (unpickled: a third of a deep copy's time)."""
    return pickle.loads(_specs())


@functools.cache
def _platforms_read_once() -> dict[str, dict[str, Any]]:
    """The platform files, read and validated once per campaign; nothing writes to them."""
    return load_platforms()


# The pytest plugins a machine under test has: rigcheck's own and pytest-benchmark, which the
# perf suites use (rigcheck's dependencies). The self-test environment adds others (xdist,
# hypothesis, anyio...) that judge nothing in a suite run and cost a tenth of a node's time.
ON_A_NODE = {"rigcheck-hint", "benchmark"}


@functools.cache
def _not_on_a_node() -> tuple[str, ...]:
    found = importlib.metadata.entry_points(group="pytest11")
    return tuple(arg for ep in found if ep.name not in ON_A_NODE for arg in ("-p", f"no:{ep.name}"))


def _measured(node: Node, folder: Path, rng: random.Random) -> Path:
    """The node's measurements as a replay file: each device's figures drawn anew."""
    count = len(node.machine["gpus"]) if node.family != "host" else 0
    devices = [str(i) for i in range(count)] or ["cpu"]
    path = folder / "measurements.json"
    path.write_text(json.dumps(replay_file(node.cls, devices, node.slow, rng)))
    return path


def _burn_in(node: Node, snapshot: dict[str, Any], folder: Path, rng: random.Random) -> Path:
    """The node's burn-in trace with its faults written in, as --burn-in-trace reads one."""
    trace = acceptance.healthy_trace(node.cls, snapshot["devices"], rng)
    for signature in node.trace_faults:
        acceptance.inject(trace, signature, rng)
    if node.fabric:  # its ports' counters sampled before and after the load
        trace["rdma_counters"] = fabric.burn_in_samples(node.fabric, folder / "sys" / "root")
    path = folder / "burnin-trace.json"
    path.write_text(json.dumps(trace))
    return path


def judge(node: Node, tier: str, folder: Path, rng: random.Random | None = None) -> Judged:
    """Run the class's suites in `tier` on the node's snapshot (and, beyond quick, its
    measurements drawn with `rng`); the verdict and failed checks."""
    import pytest

    rng = rng or random.Random(0)

    from rigcheck.check import pytest_args

    folder.mkdir(parents=True, exist_ok=True)
    facts = folder / "facts.json"
    snapshot = node_snapshot(node, folder / "sys")
    facts.write_text(json.dumps(snapshot))
    junit = folder / "junit.xml"
    timed = [f"--replay-measurements={_measured(node, folder, rng)}"] if tier != "quick" else []
    if node.fabric:  # the node spec its user passes (docs/fabric)
        timed.append(f"--fabric={node.fabric.spec}")
    if tier == "acceptance":
        timed.append(f"--burn-in-trace={_burn_in(node, snapshot, folder, rng)}")
    # The tier's budget is wall time, from the process's start: a campaign judging node after
    # node in one process would spend it on earlier nodes. What a tier catches is the question
    # here; its time to a verdict is measured (Judged.seconds), not judged. The reports plugin
    # is off: it rewrites the certificate after every check (most of a node's time) and judges
    # nothing; the outcomes come from the JUnit XML. So is pytest's unraisable-exception
    # plugin: it runs five full garbage collections at each session's end (a fifth of a node's
    # time in a campaign's large heap) to turn a __del__'s error into a warning, never a verdict.
    args = [node.cls, f"--tier={tier}", f"--tier-budget={CAMPAIGN_BUDGET_S}", f"--facts={facts}",
            f"--junitxml={junit}", "-p", "no:rigcheck.plugin.reports",
            "-p", "no:unraisableexception", *_not_on_a_node(), *timed]  # fmt: skip
    started = time.perf_counter()
    with (
        mock.patch.object(plugin_core, "load_all", _specs_read_once),
        mock.patch.object(plugin_core, "load_platforms", _platforms_read_once),
        mock.patch.dict(os.environ, {"RIGCHECK_HISTORY": "none"}),
        contextlib.redirect_stdout(io.StringIO()),  # a campaign prints its matrix, not 100 runs
        warnings.catch_warnings(),
        narrowed(),
    ):
        warnings.simplefilter("ignore")
        code = pytest.main(pytest_args(args))
    seconds = time.perf_counter() - started
    failed, unjudged = failed_checks(junit), unjudged_checks(junit)
    if code not in (0, 1) or (code == 1) != bool(failed or unjudged):
        raise RuntimeError(f"the suites ended with exit code {code} on {facts}: not a verdict")
    return Judged("fail" if failed else "pass", failed, seconds, unjudged)


def failed_checks(junit: Path) -> tuple[str, ...]:
    """The names of the checks that failed or errored in a run's JUnit XML, but for a
    measurement the class's replay file has no figure of (NO_FIGURE: not judged here)."""
    cases = ElementTree.parse(junit).getroot().iter("testcase")
    bad = [_check(c) for c in cases if _failed(c) and not _no_figure(c)]
    return tuple(sorted(set(bad)))


NO_FIGURE = "no recorded measurement of "  # rigcheck/measure/replay.py's ReplayError


def unjudged_checks(junit: Path) -> tuple[str, ...]:
    """The figures a check could not judge for want of them in the replay file."""
    cases = ElementTree.parse(junit).getroot().iter("testcase")
    return tuple(sorted({_no_figure(c).split()[0] for c in cases if _no_figure(c)}))


def _check(case: ElementTree.Element) -> str:
    """The check's name without its parameters: test_matmul_tflops, not one per GPU."""
    return case.get("name", "?").split("[")[0]


def _failed(case: ElementTree.Element) -> bool:
    return case.find("failure") is not None or case.find("error") is not None


def _no_figure(case: ElementTree.Element) -> str:
    """What follows NO_FIGURE in the check's failure ("h2d_pinned_gbps for GPU 0 ..."), or ""."""
    found = case.find("failure")
    message = (found.get("message") or "") if found is not None else ""
    head, _, rest = message.removeprefix("Failed: ").partition(NO_FIGURE)
    return rest if not head else ""
