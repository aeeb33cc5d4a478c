"""The burn-in's section of report.html: the trace beside the certificate, plotted over time."""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from rigcheck.burnin.trace import FILE_NAME, BurnInError, load_trace


def burn_in_section(certificate: dict[str, Any], run_dir: Path | None = None) -> str:
    """Charts of clocks, temperature, power and TFLOP/s per device; '' without a trace."""
    recorded = (certificate.get("run") or {}).get("report_dir")
    folders = [run_dir, Path(recorded) if isinstance(recorded, str) and recorded else None]
    path = next((f / FILE_NAME for f in folders if f and (f / FILE_NAME).is_file()), None)
    if path is None:
        return ""
    try:
        trace = load_trace(path)
    except BurnInError as exc:
        return f'<section id="burn-in"><h2>Burn-in</h2><p>{escape(str(exc))}</p></section>'
    from rigcheck.reports.burnin_plots import trace_charts

    origin = trace["origin"]
    head = (
        f"{len(trace['devices'])} device(s), {trace['duration_s']:g} s, {trace['precision']} "
        f"GEMM then a memory pattern test; trace {escape(origin['kind'])}"
        + (f" ({escape(origin['note'])})" if origin.get("note") else "")
        + f": <code>{FILE_NAME}</code> (judge it again with <code>--burn-in-trace=FILE</code>)"
    )
    return (
        f'<section id="burn-in"><h2>Burn-in under load</h2><p class="muted">{head}</p>'
        f'<div class="figure">{"".join(trace_charts(trace))}</div></section>'
    )
