"""The store at scale (issue 43): certificates kept for failures and a window of passes, a
store made by the first schema migrated with its data, `rigcheck history prune`, each series
bounded, the latest run per node found in SQL."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa
from history_runs import node_run

from rigcheck.cli import main
from rigcheck.history import store
from rigcheck.history.run_hook import remember_run
from rigcheck.history.series import WINDOW, node_series, update_series


def kept_certificates(url: str) -> list[str]:
    engine = store.open_store(url)
    query = sa.text("SELECT r.run_id FROM certificates c JOIN runs r ON r.id = c.run ORDER BY 1")
    with engine.connect() as connection:
        found = list(connection.execute(query).scalars())
    engine.dispose()
    return found


def test_failures_keep_their_certificate_passes_only_the_newest(url, monkeypatch):
    monkeypatch.setenv("RIGCHECK_HISTORY_KEEP_PASSES", "2")
    for day in range(1, 6):
        remember_run(url, *node_run("node-17", f"2026-11-0{day}T10:00:00Z", xid_on_gpu1=day == 2))
    assert kept_certificates(url) == [
        "2026-11-02T10:00:00Z-node-17",  # the failure
        "2026-11-04T10:00:00Z-node-17",
        "2026-11-05T10:00:00Z-node-17",
    ]
    engine = store.open_store(url)
    assert [r["run_id"] for r in store.latest_runs(engine)] == ["2026-11-05T10:00:00Z-node-17"]
    assert store.count_runs(engine) == 5  # the rows stay: only certificates go
    engine.dispose()


def test_prune_deletes_old_runs_and_says_how_many(url, capsys):
    remember_run(url, *node_run("node-17", "2020-01-01T10:00:00Z"))
    remember_run(url, *node_run("node-17", "2099-01-01T10:00:00Z"))
    assert main(["history", "prune", "--older-than", "30d", "--history", url]) == 0
    assert "pruned 1 runs started before" in capsys.readouterr().out
    engine = store.open_store(url)
    assert [r["run_id"] for r in store.load_runs(engine)] == ["2099-01-01T10:00:00Z-node-17"]
    engine.dispose()
    with pytest.raises(SystemExit) as stopped:  # argparse's own exit: the usage line and why
        main(["history", "prune", "--older-than", "soon", "--history", url])
    assert stopped.value.code == 2


def test_a_series_keeps_its_newest_window_and_counts_every_run(url):
    engine = store.open_store(url)
    entry = {"figure": "matmul_bf16_tflops", "label": "gpu0", "measured": 1.0, "unit": "TFLOP/s"}
    with engine.begin() as connection:
        for i in range(WINDOW + 5):
            at = f"2026-11-{1 + i // 24:02d}T{i % 24:02d}:00:00Z"
            update_series(connection, "node-17", "h100", at, [{**entry, "measured": float(i)}])
        update_series(connection, "node-17", "h100", at, [{**entry, "measured": -1.0}])  # again
        (found,) = node_series(connection, "node-17")
    engine.dispose()
    assert found["runs"] == WINDOW + 5 and len(found["recent"]) == WINDOW
    assert found["recent"][0][1] == 5.0 and found["recent"][-1] == (at, -1.0)


def test_a_store_of_the_first_schema_is_migrated_with_its_runs(url):
    from alembic import command
    from alembic.config import Config

    certificate, _ = node_run("node-17", "2026-11-02T10:00:00Z", xid_on_gpu1=True)
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        config = Config()
        config.set_main_option("script_location", str(store.MIGRATIONS))
        config.attributes["connection"] = connection
        command.upgrade(config, "0001")
        run = {"at": "2026-11-02T10:00:00Z", "certificate": json.dumps(certificate)}
        connection.execute(
            sa.text(
                "INSERT INTO runs (id, run_id, node, class_name, verdict, started_at, "
                "certificate) VALUES (1, 'r1', 'node-17', 'h100', 'fail', :at, :certificate)"
            ),
            run,
        )
        for outcome in ("pass", "fail"):
            connection.execute(sa.text(
                "INSERT INTO checks (run, check_id, name, outcome, gpu) "
                "VALUES (1, 'c', 'c', :o, 1)"), {"o": outcome})  # fmt: skip
        connection.execute(sa.text(
            "INSERT INTO gpus (run, idx, serial_key, uuid_key) "
            "VALUES (1, 1, 'board', 'uuid')"))  # fmt: skip
        connection.execute(sa.text(
            "INSERT INTO figures (run, figure, label, measured, unit) "
            "VALUES (1, 'matmul_bf16_tflops', 'gpu0', 900, 'TFLOP/s')"))  # fmt: skip
    engine.dispose()
    engine = store.open_store(url)  # to the newest revision, data moved
    assert store.certificate_of(engine, 1) == certificate
    (moved,) = store.load_runs(engine)
    assert moved["root_cause"] == certificate["root_cause"] and moved["root_cause"]
    assert [c["outcome"] for c in moved["failed"]] == ["fail"]
    # 0004: the failed check carries its GPU's digests, and the board is found by them.
    assert [(s.started_at, s.gpu) for s in store.failing_sightings(engine, ["board"])["board"]] == [
        ("2026-11-02T10:00:00Z", 1)
    ]
    with engine.connect() as connection:
        (found,) = node_series(connection, "node-17")
        checks = connection.execute(sa.text("SELECT count(*) FROM checks")).scalar()
        keys = connection.execute(sa.text("SELECT serial_key, uuid_key FROM checks")).all()
    engine.dispose()
    assert found["recent"] == [("2026-11-02T10:00:00Z", 900.0)] and checks == 1
    assert keys == [("board", "uuid")]  # 0004 filled them from the GPU rows
