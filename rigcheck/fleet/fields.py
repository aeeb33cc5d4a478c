"""The fields of a certificate the fleet reads, checked and kept; the rest is dropped as soon as
the file is read. A fleet of 20,000 nodes cannot afford the whole certificate schema per file
(75-90% of the time, issue 43) nor holding every certificate (0.78 MB each in memory): this
checks what the judgement, the table and the page use, naming the spot like the schema does."""

from __future__ import annotations

from typing import Any

from rigcheck.reports.certificate import CertificateError

PASSED = ("pass", "skip")
# what fleet.judge and reports.plots.figure_chart read of a figure entry
FIGURE_KEYS = ("figure", "label", "measured", "unit", "verdict", "floor", "achievable", "datasheet")


def fleet_fields(data: Any, source: str) -> dict[str, Any]:
    """The certificate reduced to what the fleet reads; CertificateError names a wrong field."""
    _expect(data, dict, source, "$", "an object")
    run = _field(data, "run", dict, source, "$")
    cls = _field(data, "class", dict, source, "$")
    machine = _field(data, "machine", dict, source, "$")
    host = machine.get("host")
    checks = _field(data, "checks", list, source, "$")
    return {
        "verdict": _field(data, "verdict", str, source, "$"),
        "partial_reason": data.get("partial_reason"),
        "class": {"name": cls.get("name")},
        "run": {"id": run.get("id"), "started_at": _field(run, "started_at", str, source, "$.run")},
        "machine": {"host": {"hostname": host.get("hostname")} if isinstance(host, dict) else {}},
        "checks": [
            kept
            for i, check in enumerate(checks)
            if (kept := _check(check, source, f"$.checks[{i}]")) is not None
        ],
    }


def _check(check: Any, source: str, where: str) -> dict[str, Any] | None:
    """A check the fleet reads (it failed, or measured a figure), else None."""
    _expect(check, dict, source, where, "an object")
    outcome = _field(check, "outcome", str, source, where)
    figures = [
        _figure(entry, source, f"{where}.figures[{j}]")
        for j, entry in enumerate(_field(check, "figures", list, source, where))
    ]
    if outcome in PASSED and not any(e.get("measured") is not None for e in figures):
        return None
    message = check.get("message")
    return {
        "name": _field(check, "name", str, source, where),
        "outcome": outcome,
        "message": message if isinstance(message, str) else None,
        "figures": figures,
    }


def _figure(entry: Any, source: str, at: str) -> dict[str, Any]:
    """A figure entry cut to the keys the judgement and the charts read (not its definition,
    sources or reason: most of a certificate's bytes)."""
    _expect(entry, dict, source, at, "an object")
    _field(entry, "figure", str, source, at)
    measured = entry.get("measured")
    if measured is not None and not isinstance(measured, int | float):
        raise _wrong(source, f"{at}.measured", "a number or null", measured)
    return {key: entry[key] for key in FIGURE_KEYS if key in entry}


def _field(data: dict, key: str, kind: type, source: str, where: str) -> Any:
    if key not in data:
        raise CertificateError(
            f"{source}: not a valid certificate at {where}: {key!r} is a required property"
        )
    _expect(data[key], kind, source, f"{where}.{key}", _NAMES[kind])
    return data[key]


def _expect(value: Any, kind: type, source: str, where: str, name: str) -> None:
    if not isinstance(value, kind):
        raise _wrong(source, where, name, value)


def _wrong(source: str, where: str, expected: str, value: Any) -> CertificateError:
    return CertificateError(
        f"{source}: not a valid certificate at {where}: {str(value)[:60]!r} is not {expected}"
    )


_NAMES = {dict: "an object", list: "an array", str: "a string"}
