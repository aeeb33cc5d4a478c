"""The certificate: masking, the overall verdict, the schema, atomic writes."""

import json
import stat
from pathlib import Path
from types import SimpleNamespace

import pytest

from rigcheck.facts import Facts
from rigcheck.reports.certificate import (
    CertificateError,
    build_certificate,
    load_certificate,
    overall_verdict,
    validate_certificate,
    write_certificate,
)
from rigcheck.reports.html import render_html
from rigcheck.reports.masking import mask

REPO = Path(__file__).resolve().parents[2]
FIXTURES = sorted((REPO / "fixtures" / "certificates").glob("*.json"))
SERIAL, UUID = "1652923456781", "GPU-5d1e2c33-8f7a-4c1b-9e2d-0a1b2c3d4e51"
RUN = {
    "id": "20261122T021425Z-node07",
    "command_line": "pytest -m h100",
    "args": ["-m", "h100"],
    "cwd": "/work",
    "started_at": "2026-11-22T02:14:25Z",
    "finished_at": None,
    "duration_s": None,
    "report_dir": "reports/x",
}


def check(outcome: str, message: str | None = None) -> dict:
    return {
        "id": f"suites/facts/test_x.py::test_{outcome}", "name": f"test_{outcome}",
        "area": "facts", "file": "suites/facts/test_x.py", "line": 3, "outcome": outcome,
        "phase": None, "message": message, "detail": None, "duration_s": 0.1, "warnings": [],
        "figures": [],
    }  # fmt: skip


def certificate(unmask: bool = False, partial_reason: str | None = None) -> dict:
    machine = {
        "schema_version": 1,
        "origin": {"kind": "synthetic"},
        "host": {"hostname": "node07"},
        "software": {"torch": {"version": "2.5.1"}},
        "devices": [{"index": 0, "vendor": "nvidia", "serial": SERIAL, "uuid": UUID}],
    }
    target = SimpleNamespace(spec=None, how="detected: nothing fits", facts=Facts(machine))
    checks = [check("fail", f"GPU 0 (serial {SERIAL}, {UUID}) fell off the bus"), check("pass")]
    return build_certificate(
        run=RUN, target=target, checks=checks, selected=[c["id"] for c in checks],
        exit_status=1, partial_reason=partial_reason, unmask=unmask,
    )  # fmt: skip


def test_serials_and_uuids_are_masked_everywhere_by_default():
    text = json.dumps(certificate())
    assert SERIAL not in text and UUID not in text
    assert mask(SERIAL) == "masked…6781"
    data = json.loads(text)
    assert data["masked"] is True
    assert data["machine"]["devices"][0]["serial"] == "masked…6781"
    assert "serial masked…6781, masked…4e51) fell off" in data["checks"][0]["message"]


def test_unmask_keeps_them():
    data = certificate(unmask=True)
    assert data["masked"] is False
    assert data["machine"]["devices"][0]["uuid"] == UUID


def test_a_built_certificate_matches_its_schema():
    validate_certificate(certificate(), "built")
    validate_certificate(certificate(partial_reason="interrupted"), "built partial")


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_the_committed_fixtures_match_the_schema(path):
    assert load_certificate(path)["schema_version"] == 1


def test_an_invalid_certificate_names_where():
    bad = certificate()
    bad["verdict"] = "probably fine"
    with pytest.raises(CertificateError, match=r"built: not a valid certificate at \$\.verdict"):
        validate_certificate(bad, "built")


@pytest.mark.parametrize(
    ("outcomes", "partial", "verdict"),
    [
        (["pass", "skip", "xfail"], False, "pass"),
        (["pass", "warn"], False, "warn"),
        (["pass", "warn"], True, "incomplete"),
        (["pass", "fail"], True, "fail"),
        ([], True, "incomplete"),
    ],
)
def test_overall_verdict_fails_closed(outcomes, partial, verdict):
    assert overall_verdict([check(o) for o in outcomes], partial) == verdict


def test_writes_are_atomic_and_readable(tmp_path):
    path = tmp_path / "certificate.json"
    write_certificate(path, certificate())
    write_certificate(path, certificate(partial_reason="again"))
    assert [p.name for p in tmp_path.iterdir()] == ["certificate.json"]  # no temporary left
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert load_certificate(tmp_path)["partial_reason"] == "again"


def test_a_missing_or_broken_file_is_a_clear_error(tmp_path):
    with pytest.raises(CertificateError, match="no such certificate"):
        load_certificate(tmp_path / "nothing.json")
    (tmp_path / "certificate.json").write_text("{")
    with pytest.raises(CertificateError, match="not valid JSON"):
        load_certificate(tmp_path)


def test_the_page_renders_a_machine_with_no_class_and_a_partial_run():
    page = render_html(certificate(partial_reason="interrupted (Ctrl-C / SIGINT) after 2 of 9"))
    assert "<b>no device class</b>: detected: nothing fits" in page
    assert "Partial report: interrupted (Ctrl-C / SIGINT) after 2 of 9" in page
    assert SERIAL not in page and "masked…6781" in page
