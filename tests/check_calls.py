"""One check function called directly, outside a pytest run, and what pytest would report."""

from __future__ import annotations

import warnings

import pytest


def call(check, *args) -> tuple[str, str, list[str]]:
    """(outcome, message, the class names of the warnings it raised) of one check call."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            check(*args)
            outcome, message = "passed", ""
        except pytest.xfail.Exception as exc:  # before fail: XFailed is a Failed
            outcome, message = "xfailed", str(exc)
        except AssertionError as exc:  # the message, without pytest's rewritten comparison
            outcome, message = "failed", str(exc).split("\nassert ")[0]
        except pytest.fail.Exception as exc:
            outcome, message = "failed", str(exc)
        except pytest.skip.Exception as exc:
            outcome, message = "skipped", str(exc)
    return outcome, message, [w.category.__name__ for w in caught]
