"""Facts: reading by dotted path, failing closed, saving atomically, loading with clear errors."""

import json

import pytest

from rigcheck.errors import FactsError, FactUnavailable
from rigcheck.facts import SCHEMA_VERSION, Facts, load_facts
from rigcheck.facts.probe import error_record, guarded, is_error


def snapshot(**overrides):
    data = {
        "schema_version": SCHEMA_VERSION,
        "origin": {"kind": "synthetic"},
        "host": {"cpu": {"model": "Test CPU"}, "memory_total_bytes": error_record("psutil broke")},
        "software": {},
        "devices": [{"index": 0, "vendor": "nvidia", "pci": {"device_id": "0x2330"}}],
    }
    data.update(overrides)
    return data


def test_get_reads_nested_paths_and_list_indices():
    facts = Facts(snapshot())
    assert facts.get("host.cpu.model") == "Test CPU"
    assert facts.get("devices.0.pci.device_id") == "0x2330"


def test_get_fails_closed_on_an_error_record_with_its_reason():
    with pytest.raises(FactUnavailable, match="psutil broke"):
        Facts(snapshot()).get("host.memory_total_bytes")


def test_get_fails_closed_on_a_missing_fact():
    with pytest.raises(FactUnavailable, match="not in the snapshot"):
        Facts(snapshot()).get("host.cpu.cores")


def test_guarded_turns_any_exception_into_an_error_record():
    def broken():
        raise OSError("no such device")

    value = guarded(broken)
    assert is_error(value) and value["error"] == "OSError: no such device"
    assert guarded(lambda: 3) == 3


def test_save_then_load_round_trips(tmp_path):
    path = tmp_path / "sub" / "machine.json"
    Facts(snapshot()).save(path)
    assert load_facts(path).data == snapshot()
    assert [p.name for p in path.parent.iterdir()] == ["machine.json"]  # no temp file left


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        (json.dumps({"schema_version": 1}), "invalid facts snapshot at $"),
        (json.dumps(snapshot(schema_version=99)), "facts schema version 99"),
    ],
)
def test_load_says_what_is_wrong_with_a_bad_file(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(FactsError, match=r"bad\.json") as info:
        load_facts(path)
    assert message in str(info.value)


def test_load_of_a_missing_file_names_it(tmp_path):
    with pytest.raises(FactsError, match="no such facts file"):
        load_facts(tmp_path / "absent.json")
