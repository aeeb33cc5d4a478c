"""Where Slurm is missing, the Slurm test skips on a developer's machine and fails on CI
(RIGCHECK_REQUIRE_SLURM=1): never a silent skip there."""

import pytest
import slurm_cluster
from slurm_cluster import require_slurm


def test_missing_slurm_skips_with_the_install_command(monkeypatch):
    monkeypatch.delenv("RIGCHECK_REQUIRE_SLURM", raising=False)
    monkeypatch.setattr(slurm_cluster, "PROGRAMS", ("munged", "no-such-slurmd"))
    with pytest.raises(pytest.skip.Exception, match=r"no-such-slurmd not installed .*apt-get"):
        require_slurm()


def test_missing_slurm_fails_where_required(monkeypatch):
    monkeypatch.setenv("RIGCHECK_REQUIRE_SLURM", "1")
    monkeypatch.setattr(slurm_cluster, "PROGRAMS", ("no-such-slurmd",))
    with pytest.raises(pytest.fail.Exception, match=r"RIGCHECK_REQUIRE_SLURM=1 but .*no-such"):
        require_slurm()
