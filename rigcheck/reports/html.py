"""The report page: one self-contained HTML file (inline CSS and SVG, no scripts, no network)."""

from __future__ import annotations

import json
from collections import defaultdict
from html import escape
from pathlib import Path
from typing import Any

from rigcheck.reports.certificate import flatten, write_atomic
from rigcheck.reports.plots import figure_chart, fmt_value

HEADLINES = {
    "pass": "CONFORMS",
    "warn": "CONFORMS, WITH WARNINGS",
    "fail": "DOES NOT CONFORM",
    "incomplete": "INCOMPLETE",
    "regressed": "PERFORMANCE REGRESSED",
}
ORDER = {"fail": 0, "warn": 1, "pass": 2, "xfail": 3, "skip": 4}
GIB = 2**30
STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d232a;
background:#f5f7f9}
main{max-width:1100px;margin:0 auto;padding:0 24px 40px}
header.verdict{padding:22px 24px;color:#fff}
header.verdict .inner{max-width:1100px;margin:0 auto}
header.pass{background:#2e8540}header.warn{background:#b87400}header.fail{background:#c62828}
header.incomplete{background:#5b6570}header.regressed{background:#c62828}
.headline{font-size:34px;font-weight:700;letter-spacing:.02em}
.sub{font-size:15px;opacity:.95}
.partial{margin-top:10px;padding:8px 12px;background:rgba(0,0,0,.22);border-radius:4px}
h2{margin:28px 0 10px;font-size:20px;border-bottom:2px solid #dde3e8;padding-bottom:4px}
h3{margin:14px 0 6px;font-size:15px}
.counts span{display:inline-block;margin-right:14px}
article{background:#fff;border:1px solid #dde3e8;border-left:5px solid #c62828;border-radius:4px;
padding:8px 14px;margin:10px 0}
article.warn{border-left-color:#d98c00}
pre{white-space:pre-wrap;word-break:break-word;margin:6px 0;font:13px/1.4 ui-monospace,Menlo,
Consolas,monospace}
code{font:12px ui-monospace,Menlo,Consolas,monospace;color:#4a5560}
table{border-collapse:collapse;width:100%;background:#fff;margin:6px 0}
td,th{border:1px solid #dde3e8;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#eef2f5;font-weight:600}
td.msg{white-space:pre-wrap;word-break:break-word}td.time{white-space:nowrap}
summary{cursor:pointer;margin:8px 0;color:#37424d}
.badge{display:inline-block;min-width:44px;text-align:center;border-radius:3px;color:#fff;
font-size:12px;font-weight:600;padding:1px 6px}
.b-pass{background:#2e8540}.b-warn{background:#d98c00}.b-fail{background:#c62828}
.b-skip{background:#8a96a3}.b-xfail{background:#6d5a9e}
.figure{background:#fff;border:1px solid #dde3e8;border-radius:4px;padding:8px 14px;margin:10px 0}
.muted{color:#5b6570}
footer{margin-top:30px;font-size:12px;color:#5b6570}
"""


def render_html(certificate: dict[str, Any], run_dir: Path | None = None) -> str:
    """The whole page for one certificate (and the burn-in trace in its run folder, if any)."""
    from rigcheck.reports.burnin_section import burn_in_section

    body = [
        _header(certificate),
        "<main>",
        _problems(certificate, "fail", "Failures: what to do"),
        _problems(certificate, "warn", "Warnings"),
        _figures(certificate),
        burn_in_section(certificate, run_dir),
        _not_run(certificate),
        _machine(certificate),
        _checks(certificate),
        _footer(certificate),
        "</main>",
    ]
    title = (
        f"rigcheck: {_headline(certificate)} — {_class_name(certificate)} on {_host(certificate)}"
    )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head>\n<body>\n"
        + "\n".join(part for part in body if part)
        + "\n</body></html>\n"
    )


def write_html(path: Path, certificate: dict[str, Any]) -> None:
    write_atomic(path, render_html(certificate, path.parent))


def _headline(c: dict[str, Any]) -> str:
    return HEADLINES[c["verdict"]]


def _class_name(c: dict[str, Any]) -> str:
    return c["class"]["name"] or "no class"


def _host(c: dict[str, Any]) -> str:
    host = c["machine"].get("host", {})
    return str(host.get("hostname", "?")) if isinstance(host, dict) else "?"


def _header(c: dict[str, Any]) -> str:
    klass = c["class"]
    what = (
        f"class <b>{escape(klass['name'])}</b> ({escape(klass.get('title', ''))})"
        if klass["name"]
        else f"<b>no device class</b>: {escape(klass['how'])}"
    )
    s = c["summary"]
    counts = " · ".join(
        f"{s[k]} {k}" for k in ("pass", "warn", "fail", "skip", "xfail") if s[k] or k == "fail"
    )
    partial = (
        f'<div class="partial">Partial report: {escape(c["partial_reason"])}</div>'
        if c["partial"]
        else ""
    )
    return (
        f'<header class="verdict {c["verdict"]}"><div class="inner">'
        f'<div class="headline">{_headline(c)}</div>'
        f'<div class="sub">{what} · host {escape(_host(c))} · {escape(c["run"]["started_at"])}'
        f"</div>"
        f'<div class="sub">{s["done"]} of {s["selected"]} checks: {counts}</div>{partial}'
        f"{_root_cause(c)}"
        f"{_regressions(c)}"
        "</div></header>"
    )


def _root_cause(c: dict[str, Any]) -> str:
    """A failed run's root-cause line, as the terminal and a drain reason say it."""
    cause = c.get("root_cause") if c["verdict"] == "fail" else None
    return f'<div class="sub">root cause: {escape(cause)}</div>' if cause else ""


def _regressions(c: dict[str, Any]) -> str:
    rows = "".join(
        f"<li>{escape(r['benchmark'])}: {escape(r['reason'])}</li>"
        for r in c.get("regressions", [])
    )
    return f'<div class="partial">Slower than the stored run:<ul>{rows}</ul></div>' if rows else ""


def _problems(c: dict[str, Any], outcome: str, title: str) -> str:
    checks = [k for k in c["checks"] if k["outcome"] == outcome]
    if not checks:
        return ""
    items = []
    for k in checks:
        detail = (
            f"<details><summary>pytest output</summary><pre>{escape(k['detail'])}</pre></details>"
            if k.get("detail")
            else ""
        )
        items.append(
            f'<article class="{outcome}"><h3>{escape(k["name"])} <code>{escape(k["id"])}</code>'
            f"</h3><pre>{escape(k['message'] or '')}</pre>{detail}</article>"
        )
    return f'<section id="{outcome}s"><h2>{title} ({len(checks)})</h2>{"".join(items)}</section>'


def _figures(c: dict[str, Any]) -> str:
    by_figure: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for check in c["checks"]:
        for entry in check["figures"]:
            by_figure[entry["figure"]].append(entry)
    if not by_figure:
        return (
            '<section id="figures"><h2>Measured figures</h2><p class="muted">No measured figure '
            "in this run (fact checks only, or the class has no figures yet).</p></section>"
        )
    blocks = []
    for name, entries in by_figure.items():
        first = entries[0]
        sources = "".join(
            f"<tr><th>{tier}</th><td>{_num(first.get(tier))}</td>"
            f"<td>{escape(str((first.get('sources') or {}).get(tier) or '—'))}</td></tr>"
            for tier in ("datasheet", "achievable", "floor")
        )
        across = f" across {len(entries)} devices" if len(entries) > 1 else ""
        blocks.append(
            f'<div class="figure"><h3>{escape(name)} ({escape(first["unit"])}){across}</h3>'
            f'<p class="muted">{escape(first.get("definition") or "")}</p>'
            f"{figure_chart(entries)}"
            f"<table><tr><th>tier</th><th>value</th><th>source</th></tr>{sources}</table></div>"
        )
    return f'<section id="figures"><h2>Measured figures</h2>{"".join(blocks)}</section>'


def _not_run(c: dict[str, Any]) -> str:
    if not c["not_run"]:
        return ""
    rows = "".join(f"<li><code>{escape(i)}</code></li>" for i in c["not_run"])
    return (
        f'<section id="not-run"><h2>Not run ({len(c["not_run"])})</h2>'
        f"<p>Selected but not run, so not judged:</p><ul>{rows}</ul></section>"
    )


def _checks(c: dict[str, Any]) -> str:
    rows = []
    for k in sorted(c["checks"], key=lambda k: (ORDER[k["outcome"]], k["id"])):
        rows.append(
            f'<tr><td><span class="badge b-{k["outcome"]}">{k["outcome"]}</span></td>'
            f"<td>{escape(k['name'])}<br><code>{escape(k['file'])}</code></td>"
            f'<td>{escape(k["area"])}</td><td class="msg">{escape(k["message"] or "")}</td>'
            f"<td>{k['duration_s']:.2f} s</td></tr>"
        )
    return (
        f'<section id="checks"><h2>All checks ({len(c["checks"])})</h2><table>'
        "<tr><th>verdict</th><th>check</th><th>area</th><th>message</th><th>time</th></tr>"
        f"{''.join(rows)}</table></section>"
    )


def _machine(c: dict[str, Any]) -> str:
    machine = c["machine"]
    host = machine.get("host") if isinstance(machine.get("host"), dict) else {}
    cpu = host.get("cpu") if isinstance(host.get("cpu"), dict) else {}
    rows = [
        ("host", host.get("hostname")),
        ("OS", f"{host.get('os_release') or host.get('os')} (kernel {host.get('kernel')})"),
        ("CPU", f"{cpu.get('model')}, {cpu.get('cores_physical')} cores"),
        ("memory", _gib(host.get("memory_total_bytes"))),
        ("virtualization", host.get("virtualization")),
        ("facts from", _origin(machine["origin"])),
    ] + [(name, version) for name, version in c["software"].items()]
    table = "".join(f"<tr><th>{escape(k)}</th><td>{_text(v)}</td></tr>" for k, v in rows)
    return (
        '<section id="machine"><h2>Machine</h2>'
        f"<table>{table}</table>{_devices(machine.get('devices'))}"
        "<details><summary>every fact</summary><table>"
        + "".join(
            f"<tr><td><code>{escape(k)}</code></td><td>{_text(v)}</td></tr>"
            for k, v in flatten(machine)
        )
        + "</table></details></section>"
    )


def _origin(origin: dict[str, Any]) -> str:
    """'live (pytest -m h100), 2026-11-22T02:14:25+00:00': how the facts were read."""
    how = [origin.get("command"), origin.get("collected_at"), origin.get("note")]
    details = ", ".join(str(h) for h in how if h)
    return f"{origin.get('kind')} ({details})" if details else str(origin.get("kind"))


def _devices(devices: Any) -> str:
    if not isinstance(devices, list) or not devices:
        return '<p class="muted">No accelerator.</p>'
    columns = ("index", "name", "PCI bus", "memory", "compute", "ECC", "PCIe", "serial", "uuid")
    rows = []
    for d in devices:
        pci, pcie, ecc = (
            d.get(k) if isinstance(d.get(k), dict) else {} for k in ("pci", "pcie", "ecc")
        )
        cells = (
            d.get("index"),
            d.get("name"),
            pci.get("bus_id"),
            _gib(d.get("memory_total_bytes")),
            d.get("compute_capability"),
            ecc.get("current"),
            f"gen {pcie.get('gen_current')} x{pcie.get('width_current')}" if pcie else None,
            d.get("serial"),
            d.get("uuid"),
        )
        rows.append("<tr>" + "".join(f"<td>{_text(v)}</td>" for v in cells) + "</tr>")
    head = "".join(f"<th>{c}</th>" for c in columns)
    return f"<h3>Accelerators ({len(devices)})</h3><table><tr>{head}</tr>{''.join(rows)}</table>"


def _footer(c: dict[str, Any]) -> str:
    run, klass = c["run"], c["class"]
    spec = f"{klass.get('spec_file')} (spec_version {klass.get('spec_version')})"
    masked = "serials and UUIDs masked" if c["masked"] else "serials and UUIDs NOT masked"
    return (
        f"<footer><div>command: <code>{escape(run['command_line'])}</code> (in "
        f"{escape(run['cwd'])}) · exit status {c['exit_status']}</div>"
        f"<div>rigcheck {escape(run['rigcheck_version'])} · spec {escape(spec)} · "
        f"class {escape(klass['how'])}</div>"
        f"<div>started {escape(run['started_at'])} · finished {escape(str(run['finished_at']))}"
        f" · {masked} · run {escape(run['id'])}</div>"
        f"{'<div>' + escape(c['note']) + '</div>' if c.get('note') else ''}</footer>"
    )


def _text(value: Any) -> str:
    if value is None:
        return '<span class="muted">—</span>'
    if isinstance(value, dict | list):
        return escape(json.dumps(value))
    return escape(str(value))


def _num(value: Any) -> str:
    return "—" if value is None else fmt_value(value)


def _gib(value: Any) -> str | None:
    return f"{value / GIB:.1f} GiB" if isinstance(value, int | float) else None
