"""A run as node_exporter textfile metrics (`--prometheus-textfile DIR` writes DIR/rigcheck.prom).

Prometheus' conventions (prometheus.io/docs/practices/naming): a `rigcheck_` prefix, the unit at
the end of a name (`_seconds`, and each figure's own unit: `_tflops`, `_gbps`), a verdict as a
state set (one series per possible value, 1 for the current one) so a query can match on it, and
labels with bounded values only: check names come from the suites, GPUs are indexes; serials,
UUIDs and run ids (new every run) are never labels. The file is replaced atomically (a temporary
file in DIR, then rename), so the collector never reads half a file.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import tempfile
from pathlib import Path

from rigcheck.gate.tiers import tier_of
from rigcheck.history.rows import gpus_of, pci_indexes
from rigcheck.reports.outcome import OUTCOMES

FILE_NAME = "rigcheck.prom"
RUN_VERDICTS = ("pass", "warn", "fail", "incomplete", "regressed")
NOT_A_NAME = re.compile(r"[^a-zA-Z0-9_]")


def write_textfile(folder: str | os.PathLike[str], certificate: dict, facts: dict) -> Path:
    """DIR/rigcheck.prom for this run; raises OSError when DIR cannot be written."""
    folder = Path(folder)
    path = folder / FILE_NAME
    # Not *.prom while being written: the textfile collector reads only files ending in .prom.
    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=folder, prefix=f".{FILE_NAME}.", suffix=".tmp", delete=False
    ) as tmp:
        tmp.write(render(certificate, facts))
    os.chmod(tmp.name, 0o644)  # node_exporter often runs as its own user
    os.replace(tmp.name, path)
    return path


def render(certificate: dict, facts: dict) -> str:
    lines: list[str] = []
    _run_metrics(lines, certificate)
    _check_metrics(lines, certificate, facts)
    _figure_metrics(lines, certificate)
    return "\n".join(lines) + "\n"


def _run_metrics(lines: list[str], certificate: dict) -> None:
    run, spec = certificate["run"], certificate["class"]
    started = _epoch_seconds(run["started_at"])
    finished = _epoch_seconds(run.get("finished_at")) if run.get("finished_at") else started
    _header(lines, "rigcheck_last_run_timestamp_seconds", "gauge", "when the last run finished")
    lines.append(f"rigcheck_last_run_timestamp_seconds {finished}")
    if isinstance(run.get("duration_s"), int | float):
        _header(lines, "rigcheck_last_run_duration_seconds", "gauge", "how long the last run took")
        lines.append(f"rigcheck_last_run_duration_seconds {run['duration_s']}")
    _header(lines, "rigcheck_last_run_info", "gauge", "the last run's class and tier (always 1)")
    labels = {"class": spec.get("name") or "", "tier": tier_of(certificate) or ""}
    lines.append(f"rigcheck_last_run_info{_labels(labels)} 1")
    _header(lines, "rigcheck_last_run_verdict", "gauge", "the last run's verdict, as a state set")
    for verdict in RUN_VERDICTS:
        value = int(certificate["verdict"] == verdict)
        lines.append(f"rigcheck_last_run_verdict{_labels({'verdict': verdict})} {value}")


def _check_metrics(lines: list[str], certificate: dict, facts: dict) -> None:
    about = "each check's result in the last run, as a state set; gpu: the device index it is about"
    _header(lines, "rigcheck_check_result", "gauge", about + ", empty for the machine")
    by_pci = pci_indexes(facts)
    seen: set[str] = set()
    for check in certificate["checks"]:
        for gpu in [str(g) for g in gpus_of(check, by_pci)] or [""]:  # one state set per GPU
            for outcome in OUTCOMES:
                labels = _labels({"check": check["name"], "gpu": gpu, "result": outcome})
                if labels not in seen:  # a series appears once in a scrape
                    seen.add(labels)
                    lines.append(
                        f"rigcheck_check_result{labels} {int(check['outcome'] == outcome)}"
                    )


def _figure_metrics(lines: list[str], certificate: dict) -> None:
    """One metric per figure, named for it (the figure name ends in its unit)."""
    by_name: dict[str, dict[str, float]] = {}  # metric -> labels -> value
    for check in certificate["checks"]:
        for entry in check.get("figures", []):
            if not isinstance(entry.get("measured"), int | float):
                continue
            name = "rigcheck_" + NOT_A_NAME.sub("_", entry["figure"])
            labels = _labels({"device": entry.get("label") or ""})
            # A series appears once in a scrape: the first measurement of it is kept.
            by_name.setdefault(name, {}).setdefault(labels, float(entry["measured"]))
    for name, series in sorted(by_name.items()):
        _header(lines, name, "gauge", "a figure measured by the last run (unit: the name's end)")
        lines.extend(f"{name}{labels} {value!r}" for labels, value in series.items())


def _header(lines: list[str], name: str, kind: str, help_text: str) -> None:
    lines.append(f"# HELP {name} {help_text}")
    lines.append(f"# TYPE {name} {kind}")


def _labels(labels: dict[str, str]) -> str:
    def escape(value: str) -> str:
        return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')

    return "{" + ",".join(f'{k}="{escape(v)}"' for k, v in labels.items()) + "}"


def _epoch_seconds(iso: str) -> int:
    """'2026-11-20T09:14:00Z' -> seconds since 1970 (the certificate writes UTC, with a Z)."""
    moment = dt.datetime.fromisoformat(iso.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return int(moment.timestamp())
