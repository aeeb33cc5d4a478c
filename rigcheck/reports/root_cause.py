"""One root-cause line per run: what the certificate, the terminal's verdict, a Slurm drain
reason and a Kubernetes taint all say, so an operator greps for one string everywhere.

"<key>: <detail>": the key is the failing check's name without `test_` (or `incomplete`,
`regressed`), lower case with underscores, so it is also a valid Kubernetes label value; the
detail is the check's own message, first line, cut short. None when the run passed.
"""

from __future__ import annotations

from typing import Any

from rigcheck.reports.terminal import check_name, failure_rows

MAX_CHARS = 160  # a drain reason is read in `sinfo -R`'s one line per node
INCOMPLETE, REGRESSED = "incomplete", "regressed"


def root_cause(certificate: dict[str, Any]) -> str | None:
    """The run's root-cause line, or None for a pass (with or without warnings)."""
    verdict = certificate["verdict"]
    if verdict == "fail":
        return _failure_line(certificate["checks"])
    if verdict == INCOMPLETE:
        why = certificate.get("partial_reason") or "not every check ran"
        return shorten(f"{INCOMPLETE}: {why}")
    if verdict == REGRESSED:
        first = (certificate.get("regressions") or [{}])[0]
        return shorten(f"{REGRESSED}: {first.get('benchmark')}: {first.get('reason')}")
    return None


def _failure_line(checks: list[dict[str, Any]]) -> str:
    shown, _ = failure_rows(checks)  # root cause first: the wrong product, then a broken torch
    if not shown:  # fail closed: a fail verdict always has a line
        return "fail: the certificate lists no failed check"
    first = shown[0]
    key = check_name(first).removeprefix("test_")
    message = headline(first.get("message") or "failed")
    more = f" (+{len(shown) - 1} more failed)" if len(shown) > 1 else ""
    return shorten(f"{key}: {message}", suffix=more)


def headline(message: str) -> str:
    """A message's first line; a first line that only introduces what follows ("this machine is
    not a h100:") runs on into the next, or the root cause would end at the colon."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    if not lines:
        return "failed"
    first = lines[0]
    if first.endswith(":") and len(lines) > 1:
        first = f"{first} {lines[1]}"
    return first


def shorten(text: str, suffix: str = "") -> str:
    """One line, at most MAX_CHARS, plain ASCII '...' where cut (scontrol and label values)."""
    text = " ".join(text.split())
    room = MAX_CHARS - len(suffix)
    if len(text) > room:
        text = text[: room - 3].rstrip() + "..."
    return text + suffix


def cause_key(line: str) -> str:
    """The key of a root-cause line: `device_count` from `device_count: expected 8 ...`."""
    return line.partition(":")[0].strip()
