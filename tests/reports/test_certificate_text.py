"""The certificate's text while a run goes (rigcheck.reports.certificate_text): each part masked
and dumped once, the whole exactly what json.dumps writes of the masked certificate."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from rigcheck.facts import Facts
from rigcheck.reports.certificate import build_certificate
from rigcheck.reports.certificate_text import CertificateText
from rigcheck.reports.outcome import with_warning
from rigcheck.spec import load_spec
from rigcheck.testing.synthetic import synthetic_snapshot

RUN = {"id": "r1", "started_at": "2026-11-29T05:00:00Z", "args": [], "report_dir": "reports/r1"}


def check(i: int, serial: str) -> dict:
    return {
        "id": f"suites/facts/test_x.py::test_x[gpu{i}]", "name": f"test_x[gpu{i}]",
        "area": "facts", "file": "suites/facts/test_x.py", "line": 1, "outcome": "pass",
        "phase": None, "message": f"GPU {i} serial {serial} ok", "detail": None,
        "duration_s": 0.1, "warnings": [], "figures": [],
    }  # fmt: skip


@pytest.mark.parametrize("unmask", [False, True])
def test_the_kept_text_is_the_masked_certificate_s_dump_after_every_check(unmask):
    facts = synthetic_snapshot(load_spec("h100"), 4)
    target = SimpleNamespace(spec=load_spec("h100"), how="named", facts=Facts(facts))
    serials = [d["serial"] for d in facts["devices"]]
    checks: list[dict] = []
    text = CertificateText(facts, unmask)
    selected = [check(i, s)["id"] for i, s in enumerate(serials)]

    def both():
        common = dict(run=RUN, target=target, checks=checks, selected=selected, exit_status=None,
                      partial_reason="run in progress", unmask=unmask)  # fmt: skip
        whole = build_certificate(**common)
        return text.render(build_certificate(**common, mask_here=False)), whole

    for i, serial in enumerate(serials):
        checks.append(check(i, serial))
        kept, whole = both()
        assert kept == json.dumps(whole, indent=2) + "\n"
        assert (serial in kept) is unmask
    with_warning(checks[0], "PytestUnraisableExceptionWarning: late")  # after its teardown
    text.forget(checks[0])
    kept, whole = both()
    assert kept == json.dumps(whole, indent=2) + "\n" and '"outcome": "warn"' in kept
