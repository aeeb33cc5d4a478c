"""Every fixture cites what a user can open, as the spec files must (tests/spec/test_provenance.py).

A fixture under fixtures/ is evidence a replay judges: where its figures came from must be a
public source or a file of this repository, never the developers' notes outside it
(shared/reference/, /work, a home directory). Read here:

- every "source" string in every fixtures/**/*.json: the same rules as a spec's sources (no path
  outside the repository; a claimed rigcheck run names its recording), except that a file
  recorded by rigcheck ("kind": "recorded") is itself the recording;
- every "note" string: a note may show the command a recording was made with (a /tmp report
  folder is fine there), but it must not cite the developers' notes or a file this repository
  lacks;
- every fixtures/**/*.md, read as a source.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_provenance import IN_REPO, ROOT, outside_paths, strings, unbacked_claim

FIXTURES = ROOT / "fixtures"
JSONS = sorted(FIXTURES.rglob("*.json"))
TEXTS = sorted(FIXTURES.rglob("*.md"))
DEVELOPER_NOTES = "shared/reference"


def _key(where: str) -> str:
    """The last key of a path like measurements[2].source or origin.note."""
    return where.rsplit(".", 1)[-1].split("[", 1)[0]


def cited(data) -> Iterator[tuple[str, str, str]]:
    """(where, key, text) of each "source" and "note" string in a fixture."""
    for where, text in strings(data):
        key = _key(where)
        if key in ("source", "note"):
            yield where, key, text


def note_problems(text: str) -> list[str]:
    """A note: the developers' notes, or a repository path that is not there."""
    missing = [p.rstrip(".") for p in IN_REPO.findall(text) if not (ROOT / p.rstrip(".")).exists()]
    return ([DEVELOPER_NOTES] if DEVELOPER_NOTES in text else []) + missing


def problems(data: dict) -> list[str]:
    found = []
    recorded = isinstance(data, dict) and data.get("kind") == "recorded"
    for where, key, text in cited(data):
        paths = outside_paths(text) if key == "source" else note_problems(text)
        found += [f"{where}: names {p!r}, not in this repository" for p in paths]
        why = None if recorded or key == "note" else unbacked_claim(text, where, "source")
        if why:
            found.append(f"{where}: {why}")
    return found


def _name(path: Path) -> str:
    return str(path.relative_to(FIXTURES))


@pytest.mark.parametrize("fixture", JSONS, ids=[_name(p) for p in JSONS])
def test_every_fixture_source_and_note_can_be_opened(fixture):
    assert problems(json.loads(fixture.read_text())) == []


@pytest.mark.parametrize("text", TEXTS, ids=[_name(p) for p in TEXTS])
def test_every_fixture_text_cites_what_a_user_can_open(text):
    assert outside_paths(text.read_text()) == []


def test_the_scan_reads_every_fixture_and_finds_sources():
    """The scan is not vacuous: it reads the fixtures and meets both kinds of string."""
    keys = {key for p in JSONS for _, key, _ in cited(json.loads(p.read_text()))}
    assert len(JSONS) > 50 and keys == {"source", "note"}


@pytest.mark.parametrize(
    ("data", "found"),
    [
        ({"source": "shared/reference/hardware.md: ~3.0 TB/s"}, "names 'shared/reference'"),
        ({"m": [{"source": "see /home/dev/notes.md"}]}, "names '/home/'"),
        ({"origin": {"note": "from shared/reference/hardware.md"}}, "names 'shared/reference'"),
        ({"note": "written by tests/distributed/no_such_generator.py"}, "no_such_generator.py"),
        ({"source": "measured by rigcheck on a lent H100"}, "claims a rigcheck run"),
    ],
)
def test_a_fixture_citing_what_cannot_be_opened_is_named(data, found):
    assert any(found in line for line in problems(data)), problems(data)


@pytest.mark.parametrize(
    "data",
    [
        {"note": "recorded by `RIGCHECK_REPORT_DIR=/tmp/x-reports python -m pytest suites/perf`"},
        {"source": "https://github.com/NVIDIA/nccl/issues/1264"},
        {"kind": "recorded", "source": "measured by rigcheck on this host"},
        {"label": "shared/reference is only judged in a source or a note"},
    ],
)
def test_a_command_a_url_or_a_recording_pass(data):
    assert problems(data) == []
