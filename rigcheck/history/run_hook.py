"""What a run does with its history once its certificate is written: flag boards seen failing
before, then store the run. A store that cannot be opened or written costs one warning line and
changes nothing else: the verdict and the exit status stay what the checks made them."""

from __future__ import annotations

from typing import Any

from rigcheck.history.location import shown_url, store_url


def remember_run(chosen_url: str | None, certificate: dict, facts: dict) -> list[tuple[str, str]]:
    """Lines for the run's last screen, each (colour, text): boards seen failing, or the warning."""
    url = store_url(chosen_url)
    if url is None:
        return []
    try:
        from rigcheck.history import store

        engine = store.open_store(url)
        boards, _why_not = board_evidence(chosen_url, certificate, facts)
        try:
            lines = [("red", line) for line in board_warnings(engine, certificate, boards)]
            store.write_run(engine, certificate, boards)
            lines += [("yellow", f"drift: {line}") for line in run_drifts(engine, certificate)]
        finally:
            engine.dispose()
    except Exception as exc:  # any failure of the store: the run's verdict must not depend on it
        return [("yellow", not_written(url, exc))]
    return lines


# Failed checks that say nothing of the boards present: a wrong class (a setup's choice), a
# count the user insisted on (--gpus N), or a judgement that could not be made (a replayed
# figure missing, a spec without the figure, measurements under xdist).
NOT_THE_BOARDS = ("test_product_matches_class", "test_device_count")
NOT_THE_BOARDS_SAID = (
    "no recorded measurement of",
    "not a rigcheck measurements file",
    "no reference for this class",
    "measurements never run under pytest-xdist",
)


def board_evidence(chosen_url: str | None, certificate: dict, facts: dict) -> tuple[dict, str]:
    """The facts whose GPUs the store keeps this run against, and why none when none (issue
    38): history is the machine's evidence only. Synthetic facts (fixtures: every one carries
    serial 1650000000001) never; a replayed snapshot only when --history names the store
    (asked); a run whose failures are not the boards' (wrong class, --gpus miscount, missing
    replay data) never, or its boards would read "seen failing" ever after. The run itself is
    kept, for the node's history."""
    kind = (facts.get("origin") or {}).get("kind")
    why = ""
    if kind == "synthetic":
        why = "synthetic facts: their serials are made up"
    elif kind != "live" and chosen_url is None:
        why = f"replayed facts ({kind}): kept against their GPUs only with --history URL"
    else:
        wrong = not_the_boards(certificate)
        why = f"{wrong} failed, which is not the boards' fault" if wrong else ""
    return ({**facts, "devices": []}, why) if why else (facts, why)


def not_the_boards(certificate: dict) -> str | None:
    """The first failed check of the run that says nothing of the boards present, or None."""
    for check in certificate.get("checks") or []:
        if check.get("outcome") != "fail":
            continue
        message = check.get("message") or ""
        if check.get("name", "").split("[")[0] in NOT_THE_BOARDS or any(
            said in message for said in NOT_THE_BOARDS_SAID
        ):
            return check.get("name")
    return None


def board_warnings(engine: Any, certificate: dict, facts: dict) -> list[str]:
    from rigcheck.history import rows, store

    boards = rows.gpu_rows(facts, unmask=not certificate.get("masked", True))
    keys = [k for b in boards for k in (b["serial_key"], b["uuid_key"])]
    seen = store.failing_sightings(engine, keys, except_run=certificate["run"]["id"])
    lines = []
    for board in boards:
        sightings = seen.get(board["serial_key"]) or seen.get(board["uuid_key"])
        if sightings:
            lines.append(board_line(board, sightings))
    return lines


def run_drifts(engine: Any, certificate: dict) -> list[str]:
    """The figures of this run that drifted against this node's own earlier runs: read from the
    node's pre-aggregated series (rigcheck.history.series), a few rows at any history size."""
    from rigcheck.history import rows
    from rigcheck.history.series import node_series
    from rigcheck.history.trends import series_drifts, spec_bands

    with engine.connect() as connection:
        found = node_series(connection, rows.node_name(certificate))
    classes = {certificate["class"].get("name")} - {None}
    started = certificate["run"]["started_at"]
    return [d.text() for d in series_drifts(found, spec_bands(classes)) if d.last == started]


def board_line(board: dict, sightings: list) -> str:
    name = board["serial"] or board["uuid"]
    more = f" (and {len(sightings) - 1} earlier failures)" if len(sightings) > 1 else ""
    return f"GPU {board['idx']} (serial {name}) was {sightings[0].text()}{more}"


def not_written(url: str, exc: BaseException) -> str:
    reason = " ".join(str(exc).split())[:300] or type(exc).__name__
    return (
        f"history not kept: {shown_url(url)}: {reason}. The run's verdict is unaffected; "
        "choose a writable store with --history URL or RIGCHECK_HISTORY (none: keep no history)"
    )


def export_metrics(folder: str | None, certificate: dict, facts: dict) -> list[tuple[str, str]]:
    """DIR/rigcheck.prom for node_exporter; a folder that cannot be written is one warning line."""
    if not folder:
        return []
    from rigcheck.history.prometheus_textfile import write_textfile

    try:
        write_textfile(folder, certificate, facts)
    except Exception as exc:  # like the store: metrics must never change the run's verdict
        reason = " ".join(str(exc).split())[:300] or type(exc).__name__
        return [("yellow", f"Prometheus metrics not written to {folder}: {reason}")]
    return []
