"""The single-host Slurm cluster fixture. Where Slurm is missing the tests skip, saying how to
install it, except under RIGCHECK_REQUIRE_SLURM=1 (CI sets it): there a missing Slurm fails."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import slurm_cluster


@pytest.fixture
def slurm() -> Iterator[slurm_cluster.SlurmCluster]:
    why = slurm_cluster.missing()
    if why:
        if os.environ.get("RIGCHECK_REQUIRE_SLURM") == "1":
            pytest.fail(f"RIGCHECK_REQUIRE_SLURM=1 but no Slurm cluster can start here: {why}")
        pytest.skip(f"no single-host Slurm cluster: {why} (CI installs it and runs this)")
    # Not pytest's tmp_path: munged wants its socket's folder open to everyone, and pytest's
    # base folder is private to its user. Removed afterwards, pass or fail.
    root = Path(tempfile.mkdtemp(prefix="rigcheck-slurm-"))
    cluster = slurm_cluster.SlurmCluster(root)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)
