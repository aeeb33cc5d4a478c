"""Public partial captures of real machines (fixtures/nvidia_smi/partial_captures.json): the
`nvidia-smi` table of a bug report, a `-q -d SECTION` excerpt. Each is read through the real
pynvml over the simulated libnvidia-ml (rigcheck/testing/nvml_sim/partial.py) and judged as its
class by the fact suites; a check is judged only where every fact it reads (through rigcheck's
typed accessors, rigcheck/facts/typed.py note_read) is one the capture holds. The rest are not
judged: listed, neither passed nor failed. A judged check must pass on a healthy machine and
fail, saying why, on a faulty one ('expect')."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from suite_replays import SUITES, SuiteRunner

from rigcheck.facts import typed
from rigcheck.spec import load_spec
from rigcheck.testing.nvml_sim.capture_nvlink import is_nvlink_status, parse_nvlink_status
from rigcheck.testing.nvml_sim.capture_table import is_table, parse_table
from rigcheck.testing.nvml_sim.capture_text import read_capture
from rigcheck.testing.nvml_sim.corpus import CAPTURES
from rigcheck.testing.nvml_sim.partial import partial_machine
from rigcheck.testing.nvml_sim.profiles import machine_driver
from rigcheck.testing.nvml_sim.snapshot import fake_sysfs, simulated_snapshot
from rigcheck.testing.synthetic import synthetic_snapshot

INDEX = json.loads((CAPTURES / "partial_captures.json").read_text())["captures"]


def partial_snapshot(tmp_path: Path, entry: dict) -> tuple[dict, set[str], int]:
    text = (CAPTURES / entry["file"]).read_text()
    if is_table(text):
        root = parse_table(text)
    else:
        root = parse_nvlink_status(text) if is_nvlink_status(text) else read_capture(text)
    for gpu in root.findall("gpu") if "sections" in entry else []:
        for section in [s for s in gpu if s.tag not in entry["sections"]]:
            gpu.remove(section)  # a board with no class: only these sections are replayed
    gpus = len(root.findall("gpu"))
    base = synthetic_snapshot(load_spec(entry["class"]), gpus=gpus)
    machine, held = partial_machine(root, base, Path(entry["file"]).stem, entry["source"])
    snapshot, lib = simulated_snapshot(base, machine, machine_driver(machine),
                                       fake_sysfs(tmp_path, machine))  # fmt: skip
    assert not lib.crashes, lib.crashes
    return snapshot, held, gpus


def is_held(read: str, held: set[str]) -> bool:
    """A held fact, or one inside it; "=fact" holds that fact alone (a list, not its items)."""
    pattern = typed.pattern_of(read)
    return any(pattern == h.removeprefix("=") or (h[0] != "=" and pattern.startswith(h + "."))
               for h in held)  # fmt: skip


@pytest.fixture
def judge_partial(pytester, monkeypatch):
    """run(snapshot, held, *args) -> ({judged check: outcome and message}, [not judged]).

    Each check's reads are taken per test from typed.note_read (every typed accessor calls it),
    keyed by the test pytest is running (PYTEST_CURRENT_TEST). A check that read nothing judged
    nothing of the capture."""
    monkeypatch.setenv("RIGCHECK_REPORT_DIR", str(pytester.path / "reports"))
    runner = SuiteRunner(pytester)
    reads: dict[str, set[str]] = {}
    original = typed.note_read

    def note_read(path: str, unsupported_ok: str | None = None) -> None:
        current = os.environ.get("PYTEST_CURRENT_TEST", "")
        name = current.split("::")[-1].rsplit(" (", 1)[0]
        reads.setdefault(name, set()).add(path)
        original(path, unsupported_ok)

    monkeypatch.setattr(typed, "note_read", note_read)

    def run(snapshot: dict, held: set[str], *args: str):
        reads.clear()
        done = runner(SUITES / "facts", *args, "-p", "no:rigcheck.plugin.reports",
                      inputs={"--facts": snapshot})  # fmt: skip
        errors = {n: c.problems["error"] for n, c in done.cases.items() if "error" in c.problems}
        assert not errors, errors
        judged, not_judged = {}, []
        for name, case in done.cases.items():
            if case.outcome == "skipped":
                continue
            read = reads.get(name, set())
            if read and all(is_held(r, held) for r in read):
                judged[name] = (case.outcome, case.message)
            else:
                not_judged.append(name)
        return judged, sorted(not_judged)

    return run


@pytest.mark.parametrize("entry", INDEX, ids=[Path(e["file"]).stem for e in INDEX])
def test_each_partial_capture_is_judged_on_what_it_holds(judge_partial, tmp_path, entry,
                                                         record_property):  # fmt: skip
    snapshot, held, gpus = partial_snapshot(tmp_path, entry)
    judged, not_judged = judge_partial(snapshot, held, "-m", entry["class"], "--gpus", str(gpus))
    record_property("not_judged", ", ".join(not_judged))
    assert sorted(judged) == sorted(entry["judged"]), (sorted(judged), not_judged)
    failed = {name: message for name, (outcome, message) in judged.items() if outcome != "passed"}
    assert set(failed) == set(entry["expect"]), failed
    for check, cause in entry["expect"].items():
        assert cause in failed[check], (check, failed[check])
