"""--rdma-pairs=DIR: judge an RDMA pair run (perftest between node pairs) with
suites/distributed/test_rdma_pairs.py. The job: python -m rigcheck.rdma.perftest_worker."""

from __future__ import annotations

from pathlib import Path

import pytest

from rigcheck.rdma.perftest_run import RdmaRun, RdmaRunError, load_rdma_run


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("rigcheck").addoption(
        "--rdma-pairs",
        metavar="DIR",
        help="judge the RDMA pair run in DIR (perftest between node pairs; "
        "docs/distributed.md, RDMA pairs)",
    )


@pytest.fixture(scope="session")
def rdma_run(request: pytest.FixtureRequest) -> RdmaRun:
    """The RDMA pair run given with --rdma-pairs=DIR; skipped, saying how, without one."""
    path = request.config.getoption("--rdma-pairs")
    if not path:
        pytest.skip(
            "no RDMA pair run: run `torchrun ... -m rigcheck.rdma.perftest_worker "
            "--report-dir=DIR` on every node, then judge it with --rdma-pairs=DIR "
            "(docs/distributed.md, RDMA pairs)"
        )
    if not Path(path).is_dir():
        raise pytest.UsageError(f"--rdma-pairs={path}: no such folder")
    try:
        return load_rdma_run(path)
    except RdmaRunError as exc:
        problem = str(exc)
    pytest.fail(f"cannot judge the RDMA pair run: {problem}", pytrace=False)
