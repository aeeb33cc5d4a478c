"""Every class's good snapshot passes its own class: any failure or error is a defect."""

from pathlib import Path

import pytest
from class_turns import this_turn

from rigcheck.spec import load_all
from rigcheck.testing.synthetic import synthetic_snapshot

SNAPSHOTS = Path(__file__).resolve().parents[2] / "fixtures" / "snapshots"
SPECS = load_all()
# Classes sold as 8-GPU nodes; a Grace-Blackwell tray has 4, and its good snapshot has them all.
MULTI_GPU = [
    name
    for name, spec in SPECS.items()
    if spec.backend in ("cuda", "rocm") and 8 in spec.allowed_gpu_counts
]


@pytest.fixture
def assert_passes(known_defects):
    def check(result, name):
        known = known_defects(name)
        assert not result.errors, result.describe()
        fixed = set(known) - set(result.failed)
        assert not fixed, f"fixed on {name}, remove from KNOWN_DEFECTS: {sorted(fixed)}"
        assert set(result.failed) == set(known), result.describe()
        if known:
            pytest.xfail("; ".join(sorted(set(known.values()))))
        assert result.ret == pytest.ExitCode.OK, result.describe()

    return check


@pytest.mark.parametrize("name", sorted(SPECS))
def test_good_snapshot_passes(replay, assert_passes, name):
    assert_passes(replay(SNAPSHOTS / f"{name}.json", "-m", name), name)


# The recorded snapshots above replay on every run; these synthetic 8-GPU nodes on this run's
# turn of the classes (tests/class_turns.py: every class over four commits).
@pytest.mark.parametrize("name", this_turn(MULTI_GPU))
def test_good_8_gpu_node_passes_with_gpus_8(replay, assert_passes, name):
    """With --gpus 8 the checks that need a peer run too: NVLink, topology, P2P, NUMA split."""
    snapshot = synthetic_snapshot(SPECS[name], gpus=8)
    assert_passes(replay(snapshot, "-m", name, "--gpus", "8"), name)


def test_recorded_cpu_snapshot_passes(replay, assert_passes):
    result = replay(SNAPSHOTS / "cpu-ci.json", "-m", "cpu")
    assert "[recorded]" in result.output
    assert_passes(result, "cpu")
