"""From a judge's answer to a pytest outcome: problems fail, NotApplicable skips, and a reading
the host does not expose is "not available" on the cpu class but a failure elsewhere."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from rigcheck.burnin.judge import CannotJudge, NotApplicable, NotAvailable


def judged(trace: dict[str, Any], judge: Callable[..., list[str]], *args: Any) -> list[str]:
    """The judge's problems; skips or fails the check when it cannot judge."""
    try:
        return judge(trace, *args)
    except NotApplicable as exc:
        pytest.skip(str(exc))
    except NotAvailable as exc:
        if trace["backend"] == "cpu":
            pytest.skip(f"not available on this host: {exc}")
        pytest.fail(f"cannot check: {exc}", pytrace=False)
    except CannotJudge as exc:
        pytest.fail(f"cannot check: {exc}", pytrace=False)


def report(problems: list[str], what: str, advice: str) -> None:
    """Fail with every problem, one per line, and what to do about it."""
    if problems:
        lines = "\n  ".join(problems)
        pytest.fail(f"{what}:\n  {lines}\n{advice}", pytrace=False)
