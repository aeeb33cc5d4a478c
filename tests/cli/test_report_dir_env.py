"""Issue 38: an empty or blank RIGCHECK_REPORT_DIR is not set. Before, `RIGCHECK_REPORT_DIR=
rigcheck check` kept the empty value (os.environ.setdefault), and the plugin fell back to
<rootdir>/reports, which for the installed suites is inside site-packages."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rigcheck import check
from rigcheck.reports.location import ROOT_ENV, reports_root


@pytest.mark.parametrize("value", ["", "  "])
def test_rigcheck_check_puts_reports_where_the_user_is(monkeypatch, tmp_path, value):
    monkeypatch.setenv(ROOT_ENV, value)
    monkeypatch.chdir(tmp_path)
    ran = []
    monkeypatch.setattr(os, "execv", lambda *a: ran.append(a))
    check.run(["cpu"])
    assert ran and os.environ[ROOT_ENV] == str(tmp_path / "reports")


@pytest.mark.parametrize("value", ["", " "])
def test_a_blank_setting_is_the_default(monkeypatch, value):
    monkeypatch.setenv(ROOT_ENV, value)
    assert reports_root(Path("/clone")) == Path("/clone/reports")
    monkeypatch.setenv(ROOT_ENV, "/srv/runs")
    assert reports_root(Path("/clone")) == Path("/srv/runs")
