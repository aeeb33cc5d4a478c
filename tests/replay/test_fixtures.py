"""fixtures/: one current good snapshot per class, the recorded CPU one, and nothing importable."""

import json
from pathlib import Path

import pytest

from rigcheck.detect import detect_class
from rigcheck.facts import Facts
from rigcheck.facts.snapshot import validate_snapshot
from rigcheck.spec import load_all
from rigcheck.testing.synthetic import synthetic_snapshot

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
SNAPSHOTS = FIXTURES / "snapshots"
SPECS = load_all()
REGENERATE = "python -m rigcheck.testing.synthetic --write fixtures/snapshots"


def read(path: Path) -> dict:
    return json.loads(path.read_text())


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_class_has_its_current_synthetic_snapshot(name):
    path = SNAPSHOTS / f"{name}.json"
    assert path.exists(), f"no good snapshot for {name}: run `{REGENERATE}`"
    current = json.loads(Facts(synthetic_snapshot(SPECS[name])).to_json())
    assert read(path) == current, f"{path} is out of date with its spec: run `{REGENERATE}`"


def test_no_snapshot_without_a_class():
    stray = {p.stem for p in SNAPSHOTS.glob("*.json")} - set(SPECS) - {"cpu-ci"}
    assert not stray, f"snapshots of classes with no spec file: {sorted(stray)}"


@pytest.mark.parametrize("path", sorted(SNAPSHOTS.glob("*.json")), ids=lambda p: p.name)
def test_every_snapshot_is_valid_facts(path):
    validate_snapshot(read(path), str(path))


@pytest.mark.parametrize("name", sorted(SPECS))
def test_detection_finds_each_class_in_its_snapshot(name):
    found, how = detect_class(Facts(read(SNAPSHOTS / f"{name}.json")), SPECS)
    assert found == name, how


def test_the_cpu_snapshot_was_recorded_on_a_real_machine():
    data = read(SNAPSHOTS / "cpu-ci.json")
    assert data["origin"]["kind"] == "recorded"
    assert data["origin"]["command"] == "rigcheck facts -o fixtures/snapshots/cpu-ci.json"
    assert detect_class(Facts(data), SPECS)[0] == "cpu"


def test_synthetic_snapshots_say_they_are_synthetic():
    for name in SPECS:
        origin = read(SNAPSHOTS / f"{name}.json")["origin"]
        assert origin["kind"] == "synthetic", name
        assert "not read from a machine" in origin["note"], name


def test_fixtures_is_a_data_folder_not_a_package():
    """PyPI has a package named `fixtures`: nothing here may shadow it."""
    code = sorted(str(p.relative_to(FIXTURES)) for p in FIXTURES.rglob("*.py"))
    assert not code, f"fixtures/ holds data only, found {code}"
