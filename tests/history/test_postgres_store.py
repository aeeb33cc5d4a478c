"""The history store on a real PostgreSQL (Debian's server, started for this test): two live cpu
runs kept there and read back by `rigcheck history` and `rigcheck fleet --from-history`, and a
real kernel log's events kept as rows there, once per line."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from history_runs import live_cpu_run, node_run, rigcheck, with_kernel_log
from history_services import Postgres

from rigcheck.history import store
from rigcheck.history.schema import events, metadata


@pytest.fixture
def postgres():
    # Not pytest's tmp_path: its base folder is private to root, and the server runs as postgres.
    root = Path(tempfile.mkdtemp(prefix="rigcheck-postgres-"))
    server = Postgres(root)
    try:
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


def test_two_live_cpu_runs_appear_in_history_from_postgresql(postgres, tmp_path):
    for _ in range(2):
        run = live_cpu_run(tmp_path, "--history", postgres.url)
        assert run.returncode == 0, run.stdout + run.stderr
        assert "history not kept" not in run.stdout, run.stdout
    engine = sa.create_engine(postgres.url)
    with engine.connect() as connection:  # really in PostgreSQL, migrated by alembic
        assert connection.execute(sa.text("select version_num from alembic_version")).scalar()
        assert connection.execute(sa.text("select count(*) from runs")).scalar() == 2
        assert connection.dialect.name == "postgresql"
        # The migrated tables are the ones the code declares, on PostgreSQL's types too.
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        assert compare_metadata(context, metadata) == []
    engine.dispose()
    shown = rigcheck("history", "--history", postgres.url)
    assert shown.returncode == 0, shown.stderr
    assert "every run: 2 runs" in shown.stdout
    rows = [line for line in shown.stdout.splitlines() if " cpu " in line and " live " in line]
    assert len(rows) == 2 and all(" pass " in row for row in rows), shown.stdout
    fleet = rigcheck("fleet", "--from-history", postgres.url, "-o", str(tmp_path / "fleet.html"))
    assert fleet.returncode == 0, fleet.stdout + fleet.stderr
    assert "1 nodes" in fleet.stdout and "no node to drain" in fleet.stdout
    # Kernel-log events on PostgreSQL: two runs of one boot read the same 6 lines; kept once.
    engine = store.open_store(postgres.url)
    for started, uptime in (
        ("2026-11-02T10:00:00Z", 6781800.0),
        ("2026-11-02T10:05:00Z", 6782100.0),
    ):
        certificate, facts = node_run("node-17", started, xid_on_gpu1=True)
        store.write_run(engine, certificate, with_kernel_log(facts, uptime))
    with engine.connect() as connection:
        kept = connection.execute(sa.select(events.c.source, events.c.gpu, events.c.at)).all()
    engine.dispose()
    assert len(kept) == 6 and ("xid", 1, "2026-11-02T09:59:01Z") in kept
    shown = rigcheck("history", "node-17", "--history", postgres.url)
    assert "kernel-log events: 6" in shown.stdout and "SXid 20034" in shown.stdout, shown.stdout
