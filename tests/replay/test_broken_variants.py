"""Every broken variant fails on every class it applies to: exactly its checks, with its message.

Each run takes every variant, on this run's turn of the classes (tests/class_turns.py; every
class over four commits). Every pair: RIGCHECK_ALL_CLASSES=1 RIGCHECK_ALL_VARIANTS=1."""

import json
from pathlib import Path

import pytest
from class_rotation import rotated_cases
from class_turns import this_turn_cases

from rigcheck.spec import load_all
from rigcheck.testing.synthetic import synthetic_snapshot
from rigcheck.testing.variants import load_variants

SNAPSHOTS = Path(__file__).resolve().parents[2] / "fixtures" / "snapshots"
SPECS = load_all()
# Each variant on this run's turn of the classes, and at least one class (tests/class_turns.py).
CASES = this_turn_cases(
    rotated_cases(
        (name, v) for v in load_variants() for name, spec in SPECS.items() if v.applies(spec)
    )
)


def good_snapshot(variant, name):
    """What a variant breaks: the class's fixture, another class's (wrong product), or N GPUs."""
    if variant.gpus is not None:
        return synthetic_snapshot(SPECS[name], gpus=variant.gpus)
    return json.loads((SNAPSHOTS / f"{variant.snapshot_of or name}.json").read_text())


@pytest.mark.parametrize(("name", "variant"), CASES, ids=[f"{v.name}-{n}" for n, v in CASES])
def test_variant_fails_exactly_its_checks(replay, known_defects, name, variant):
    broken = variant.apply(good_snapshot(variant, name), SPECS[name])
    result = replay(broken, "-m", name, *variant.pytest_args())

    expected = {f.test: f.message for f in variant.failures(SPECS[name])}
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.describe()
    assert not result.errors, result.describe()
    assert set(result.failed) == set(expected) | set(known_defects(name)), result.describe()
    for test, message in expected.items():
        assert message in result.failed[test], (
            f"{test} failed without {message!r} in its message:\n{result.failed[test]}"
        )
