"""The fuzzer's good snapshots come from the generator, so `python -m rigcheck.testing.fuzz` runs
from an installed wheel (which ships no fixtures/); they are the committed fixtures, byte for byte,
so the clone's replays and the fuzzer judge the same machines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rigcheck.testing import fuzz

SNAPSHOTS = Path(__file__).resolve().parents[2] / "fixtures" / "snapshots"
CLASSES = sorted(p.stem for p in SNAPSHOTS.glob("*.json") if p.stem != "cpu-ci")


@pytest.mark.parametrize("name", CLASSES)
def test_good_snapshot_is_the_committed_fixture(name):
    committed = json.loads((SNAPSHOTS / f"{name}.json").read_text())
    assert fuzz.good_snapshot(name) == committed, (
        f"fixtures/snapshots/{name}.json differs from the generator's: regenerate it with "
        "python -m rigcheck.testing.synthetic --write fixtures/snapshots"
    )


def test_good_snapshot_reads_nothing_under_fixtures(monkeypatch):
    read_text, read_bytes = Path.read_text, Path.read_bytes

    def guard(real):
        def read(self, *args, **kwargs):
            assert "fixtures" not in Path(self).parts, f"read {self}: a wheel has no fixtures/"
            return real(self, *args, **kwargs)

        return read

    monkeypatch.setattr(Path, "read_text", guard(read_text))
    monkeypatch.setattr(Path, "read_bytes", guard(read_bytes))
    assert fuzz.good_snapshot("h100")["devices"]
