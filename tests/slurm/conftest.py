"""The single-host Slurm cluster fixture (slurm_cluster.py)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import slurm_cluster


@pytest.fixture
def slurm() -> Iterator[slurm_cluster.SlurmCluster]:
    slurm_cluster.require_slurm()
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
