"""The certificate while a run goes (rigcheck.reports.live_certificate): after every check
certificate.json reads as exactly the masked certificate build_certificate makes, a late warning
rewrites its check, and a write cut short never touches the copy certificate.json links to."""

from __future__ import annotations

import json
import os
from types import SimpleNamespace

import pytest

from rigcheck.facts import Facts
from rigcheck.reports import live_certificate
from rigcheck.reports.certificate import FILE_NAME, build_certificate, write_certificate
from rigcheck.reports.live_certificate import COPIES, LiveCertificate
from rigcheck.reports.outcome import with_warning
from rigcheck.spec import load_spec
from rigcheck.testing.synthetic import synthetic_snapshot

RUN = {"id": "r1", "started_at": "2026-11-29T05:00:00Z", "args": [], "report_dir": "reports/r1"}
FACTS = synthetic_snapshot(load_spec("h100"), 4)
SERIALS = [d["serial"] for d in FACTS["devices"]]
TARGET = SimpleNamespace(spec=load_spec("h100"), how="named", facts=Facts(FACTS))


def check(i: int, outcome: str = "pass") -> dict:
    return {
        "id": f"suites/facts/test_x.py::test_x[gpu{i}]", "name": f"test_x[gpu{i}]",
        "area": "facts", "file": "suites/facts/test_x.py", "line": 1, "outcome": outcome,
        "phase": None, "message": f"GPU {i} serial {SERIALS[i]} ok", "detail": None,
        "duration_s": 0.1, "warnings": [],
        "figures": [{"figure": "matmul_bf16_tflops", "measured": 900.0 + i}] if i % 2 else [],
    }  # fmt: skip


SELECTED = [check(i)["id"] for i in range(len(SERIALS))]


def reason(checks: list) -> str:
    return f"run in progress: {len(checks)} of {len(SELECTED)} checks done"


def expected(checks: list, unmask: bool) -> dict:
    return build_certificate(
        run=RUN, target=TARGET, checks=checks, selected=SELECTED, exit_status=None,
        partial_reason=reason(checks), unmask=unmask,
    )  # fmt: skip


def live(folder, unmask: bool) -> LiveCertificate:
    first = build_certificate(run=RUN, target=TARGET, checks=[], selected=SELECTED,
                              exit_status=None, partial_reason=reason([]), unmask=unmask,
                              mask_here=False)  # fmt: skip
    return LiveCertificate(folder, first, FACTS, unmask)


def on_disk(folder) -> dict:
    return json.loads((folder / FILE_NAME).read_text())


@pytest.mark.parametrize("unmask", [False, True])
def test_after_every_check_the_file_is_the_masked_certificate(tmp_path, unmask):
    writer, checks = live(tmp_path, unmask), []
    writer.write(checks, reason(checks))
    assert on_disk(tmp_path) == expected(checks, unmask)
    for i in range(len(SERIALS)):
        checks.append(check(i, "fail" if i == 2 else "pass"))
        assert writer.write(checks, reason(checks)) == expected(checks, unmask)["verdict"]
        assert on_disk(tmp_path) == expected(checks, unmask)
        assert (SERIALS[i] in (tmp_path / FILE_NAME).read_text()) is unmask
    assert on_disk(tmp_path)["root_cause"].startswith("x: GPU 2 serial")
    with_warning(checks[1], "PytestUnraisableExceptionWarning: late")  # after its teardown
    writer.forget(checks, checks[1])
    writer.write(checks, reason(checks))
    assert on_disk(tmp_path) == expected(checks, unmask)
    assert on_disk(tmp_path)["checks"][1]["outcome"] == "warn"
    write_certificate(tmp_path / FILE_NAME, expected(checks, unmask))  # the final write
    writer.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == [FILE_NAME]


def test_a_write_cut_short_leaves_the_last_complete_certificate(tmp_path, monkeypatch):
    """A run killed while writing: only the copy not linked was being written."""
    writer, checks = live(tmp_path, False), [check(0)]
    writer.write(checks, reason(checks))
    assert (tmp_path / FILE_NAME).is_symlink()
    put = live_certificate._Copy.put

    def cut(copy, at, data):  # 40 bytes reach the disk, then the process dies
        put(copy, at, data[:40])
        raise SystemExit(137)

    monkeypatch.setattr(live_certificate._Copy, "put", cut)
    checks.append(check(1))
    with pytest.raises(SystemExit):
        writer.write(checks, reason(checks))
    assert on_disk(tmp_path) == expected(checks[:1], False)


def test_without_symbolic_links_the_whole_copy_is_written(tmp_path, monkeypatch):
    def refuse(*args):
        raise OSError("not supported")

    monkeypatch.setattr(os, "symlink", refuse)
    writer, checks = live(tmp_path, False), [check(0), check(1)]
    writer.write(checks, reason(checks))
    assert not (tmp_path / FILE_NAME).is_symlink()
    assert on_disk(tmp_path) == expected(checks, False)
    assert {p.name for p in tmp_path.iterdir()} == {FILE_NAME, *COPIES}
