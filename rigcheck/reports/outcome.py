"""One check's outcome from pytest's reports: pass / warn / fail / skip / xfail, and why."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from rigcheck.verdict import FAIL, PASS, PROPERTY, WARN

SKIP, XFAIL = "skip", "xfail"
OUTCOMES = (PASS, WARN, FAIL, SKIP, XFAIL)
DETAIL_CHARS = 8000  # a runaway traceback must not bloat the certificate
# pytest's own warning when record_property meets junit_family=xunit2: a junit setting, not news
# about the machine, so it must not turn a passing check into a warning.
IGNORED_WARNINGS = ("is incompatible with junit_family",)


def judgements(report: pytest.TestReport) -> list[dict[str, Any]]:
    """The Judgement dicts a measured check recorded (rigcheck.verdict.record), in order."""
    return [value for key, value in report.user_properties if key == PROPERTY]


def check_outcome(
    reports: Iterable[pytest.TestReport], warnings: Iterable[str] = ()
) -> dict[str, Any]:
    """Fold one test's setup/call/teardown reports into the certificate's check entry."""
    reports = list(reports)
    warnings = [w for w in warnings if counts_as_warning(w)]
    last = reports[-1]
    figures = judgements(last) or [j for r in reports for j in judgements(r)]
    outcome, phase, message, detail = _fold(reports, figures, warnings)
    return {
        "id": last.nodeid,
        "outcome": outcome,
        "phase": phase,
        "message": message,
        "detail": detail,
        "duration_s": round(sum(r.duration for r in reports), 4),
        "warnings": warnings,
        "figures": figures,
    }


def _fold(reports, figures, warnings) -> tuple[str, str | None, str | None, str | None]:
    failed = next((r for r in reports if r.failed), None)
    if failed is not None:
        return FAIL, failed.when, failure_message(failed), failed.longreprtext[-DETAIL_CHARS:]
    skipped = next((r for r in reports if r.skipped), None)
    if skipped is not None:
        if hasattr(skipped, "wasxfail"):
            return XFAIL, skipped.when, _xfail_reason(skipped.wasxfail), None
        return SKIP, skipped.when, skip_reason(skipped), None
    call = next((r for r in reversed(reports) if r.when == "call"), None)
    if call is None:  # fail closed: a check whose body never ran has not passed
        return FAIL, None, "the check did not run (no call phase reported)", None
    if hasattr(call, "wasxfail"):
        return WARN, "call", f"passed although marked xfail ({_xfail_reason(call.wasxfail)})", None
    reasons = [f"{j['figure']}: {j['reason']}" for j in figures]
    bad = [j for j in figures if j.get("verdict") == FAIL]
    if bad:  # a judgement says fail but the test did not assert it: fail closed
        return FAIL, "call", "; ".join(f"{j['figure']}: {j['reason']}" for j in bad), None
    if warnings or any(j.get("verdict") == WARN for j in figures):
        return WARN, "call", "; ".join(reasons + warnings), None
    return PASS, None, "; ".join(reasons) or None, None


def counts_as_warning(text: str) -> bool:
    return not any(ignored in text for ignored in IGNORED_WARNINGS)


def with_warning(check: dict[str, Any], text: str) -> None:
    """A warning pytest reports after the check's last report (it does, from its warnings
    plugin): a pass becomes a warn, other outcomes keep theirs."""
    if not counts_as_warning(text):
        return
    check["warnings"].append(text)
    if check["outcome"] == PASS:
        check["outcome"] = WARN
        check["phase"] = "call"
        check["message"] = "; ".join(filter(None, [check["message"], text]))


def failure_message(report: pytest.TestReport) -> str:
    """What the check said: the assertion's message, without pytest's introspection tail."""
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        text = crash.message
    else:  # e.g. a fixture that does not exist: pytest's text ends with the error line
        lines = report.longreprtext.strip().splitlines()
        text = lines[-1] if lines else "failed"
    for prefix in ("AssertionError: ", "Failed: "):
        if text.startswith(prefix):
            text = text[len(prefix) :]
    head, sep, _ = text.rpartition("\nassert ")
    text = head if sep and head else text
    phase = "" if report.when == "call" else f"error in {report.when}: "
    return phase + text.strip()


def skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix("Skipped: ")


def _xfail_reason(wasxfail: str) -> str:
    return wasxfail.removeprefix("reason: ") or "expected to fail"
