"""pytest options and the session fixture for the multi-process checks (suites/distributed).

One torchrun job per session, started the first time a check asks for its results; or a recorded
job read back with --collectives=PATH. Imports nothing heavy: torch lives in the job.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest

from rigcheck.distributed.results import CollectiveRun, CollectivesError, load_run
from rigcheck.distributed.worker import size_arg
from rigcheck.measure.check import INCOMPLETE_KEY
from rigcheck.measure.timing import cap_s
from rigcheck.number_text import float_option

CPU_RANKS = 2  # CI's machine has 2 cores; gloo with 2 processes exercises the same path
CPU_ITERS = 10  # a CPU iteration is ~0.1 s, and a shared machine is noisy: more of them
# On the cpu class the job is capped like every measurement (rigcheck/measure/timing.py): its
# set-up and its three collectives at most 30 s each. A job that the cap stops with every rank
# alive and together was slow, not hung: INCOMPLETE (issue 38: its set-up alone took 40 s at
# load 14). On GPUs the watchdog finds hangs, and a rank stuck there is a fault.
CPU_CAP_S = 4 * cap_s("cpu")
WATCHDOG_S = {"gpu": 600.0, "cpu": CPU_CAP_S}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rigcheck", "rigcheck: machine conformance")
    group.addoption(
        "--collectives",
        metavar="PATH",
        help="judge a recorded collectives run (a --report-dir that torchrun jobs wrote, or a "
        "bundled JSON file) instead of starting torchrun",
    )
    group.addoption(
        "--node-pairs",
        metavar="DIR",
        help="judge a node-pair run (the --report-dir of rigcheck.distributed.pair_worker "
        "across the nodes): names the slow node or the slow link",
    )
    group.addoption(
        "--collectives-dir",
        metavar="DIR",
        help="where this session's torchrun job writes its per-rank results "
        "(default: the run's report folder, under collectives/)",
    )
    group.addoption(
        "--collective-bytes",
        metavar="SIZE",
        type=size_arg,
        help="all-reduce, all-gather and reduce-scatter size (default 8GiB on GPUs, 64MiB on cpu)",
    )
    group.addoption(
        "--collective-timeout",
        metavar="SECONDS",
        type=float_option,
        help="watchdog for the torchrun job; each collective times out at half of it "
        f"(default {WATCHDOG_S['gpu']:.0f} on GPUs, {WATCHDOG_S['cpu']:.0f} on cpu)",
    )


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("--collectives")
    if path and not Path(path).exists():
        raise pytest.UsageError(f"--collectives={path}: no such file or folder")
    pairs = config.getoption("--node-pairs")
    if pairs and not Path(pairs).is_dir():
        raise pytest.UsageError(f"--node-pairs={pairs}: no such folder (a pair job's --report-dir)")
    timeout = config.getoption("--collective-timeout")
    if timeout is not None and not (math.isfinite(timeout) and timeout > 0):
        raise pytest.UsageError(
            f"--collective-timeout {timeout}: a number of seconds above 0, e.g. 600"
        )
    size = config.getoption("--collective-bytes")
    if size is not None and size < 1:
        raise pytest.UsageError(f"--collective-bytes {size}: a size above 0, e.g. 1GiB")


def pytest_report_collectionfinish(config: pytest.Config) -> list[str]:
    """One header line on how the GPUs are joined: the facts the topology checks judge."""
    from rigcheck.plugin.core import TARGET_KEY

    target = config.stash.get(TARGET_KEY, None)
    topology = target.facts.find("topology") if target else None
    if not isinstance(topology, dict) or not isinstance(topology.get("pairs"), list):
        return []
    if not topology["pairs"]:
        return []
    from rigcheck.distributed.pairs import link_kind

    kinds = Counter(link_kind(p) for p in topology["pairs"])
    listing = ", ".join(f"{n} x {kind}" for kind, n in kinds.most_common())
    return [f"rigcheck: GPU pairs: {listing}"]


@pytest.fixture(scope="session")
def collective_run(request, tmp_path_factory, spec, devices) -> CollectiveRun:
    """This session's torchrun job (started once), or the recorded one from --collectives."""
    config = request.config
    recorded = config.getoption("--collectives")
    if recorded:
        try:
            return load_run(recorded)
        except CollectivesError as exc:
            pytest.fail(str(exc), pytrace=False)
    if config.getoption("--facts"):
        pytest.skip(
            "facts are replayed from a file: a live torchrun job would measure this machine, "
            "not the recorded one. Pass --collectives=PATH to replay its collectives too"
        )
    if spec.backend == "mps":
        pytest.skip(f"{spec.title}: one device, and torch.distributed has no MPS backend")
    gpu = spec.backend in ("cuda", "rocm")
    nproc = len(devices) if gpu else CPU_RANKS
    watchdog = config.getoption("--collective-timeout") or WATCHDOG_S["gpu" if gpu else "cpu"]
    options = [f"--backend={'nccl' if gpu else 'gloo'}", f"--timeout-s={watchdog / 2:g}"]
    if not gpu:
        options.append(f"--iters={CPU_ITERS}")
    if config.getoption("--collective-bytes"):
        options.append(f"--bytes={config.getoption('--collective-bytes')}")
    from rigcheck.distributed.launch import run_collectives
    from rigcheck.measure import machine_lock
    from rigcheck.progress import phase, tell

    machine_lock.take(lambda line: tell(config, line))  # no other rigcheck measures meanwhile

    where = _report_dir(config, tmp_path_factory)
    title = f"collective job: {nproc} ranks over {'nccl' if gpu else 'gloo'}"
    with phase(config, title, None if gpu else watchdog, cap=not gpu) as shown:
        run = run_collectives(nproc, where, options, watchdog, tick=shown.advance)
    slow = None if gpu else run.incomplete()
    if slow:
        config.stash.setdefault(INCOMPLETE_KEY, []).append(slow)
        pytest.skip(f"INCOMPLETE: {slow} (the run is INCOMPLETE, not a pass)")
    return run


@pytest.fixture(scope="session")
def pair_run(request):
    """The node-pair run given with --node-pairs=DIR; skipped, saying how, without one."""
    from rigcheck.distributed.pair_verdict import PairRunError, load_pair_run

    path = request.config.getoption("--node-pairs")
    if not path:
        pytest.skip(
            "no node-pair run given: they need several nodes. Run `torchrun --nnodes=N ... -m "
            "rigcheck.distributed.pair_worker --report-dir=DIR` on every node and pass "
            "--node-pairs=DIR (docs/distributed.md, Node pairs)"
        )
    try:
        return load_pair_run(path)
    except PairRunError as exc:
        pytest.fail(str(exc), pytrace=False)


def _report_dir(config: pytest.Config, tmp_path_factory) -> Path:
    """--collectives-dir, else collectives/ in the reports plugin's run folder, else a temp dir."""
    given = config.getoption("--collectives-dir")
    if given:
        return Path(given)
    reports = config.pluginmanager.get_plugin("rigcheck-reports-session")
    run_dir = getattr(reports, "run_dir", None)
    if run_dir is not None:
        return Path(run_dir) / "collectives"
    return tmp_path_factory.mktemp("collectives")
