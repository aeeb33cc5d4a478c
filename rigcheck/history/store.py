"""The history store: open (and migrate) it, write a run, read runs back."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine, make_url

from rigcheck.history import rows
from rigcheck.history.schema import checks, figures, gpus, runs

MIGRATIONS = Path(__file__).with_name("migrations")
# A database server that does not answer must not hold a finished run for minutes (TCP's own
# connect timeout): its drivers' connect_timeout, in seconds, unless the URL sets one.
CONNECT_TIMEOUT_S = 10
SERVER_BACKENDS = ("postgresql", "mysql", "mariadb")


@dataclass(frozen=True)
class Sighting:
    """A board that failed a check in an earlier run."""

    node: str
    started_at: str
    check: str
    message: str | None
    gpu: int
    serial: str | None

    def text(self) -> str:
        why = self.message or self.check
        return f"seen failing on {self.node} on {self.started_at[:10]}: {why}"


def open_store(url: str) -> Engine:
    """An engine on the store, its schema brought to the newest revision."""
    parsed = make_url(url)
    engine = sa.create_engine(url, connect_args=connect_args(parsed))
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    with engine.begin() as connection:
        migrate(connection)
    return engine


def connect_args(parsed: sa.URL) -> dict[str, Any]:
    if parsed.get_backend_name() in SERVER_BACKENDS and "connect_timeout" not in parsed.query:
        return {"connect_timeout": CONNECT_TIMEOUT_S}
    return {}


def migrate(connection: Connection) -> None:
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    command.upgrade(config, "head")


def write_run(engine: Engine, certificate: dict[str, Any], facts: dict[str, Any]) -> None:
    """One run with its GPUs, checks and figures; a run written again replaces itself."""
    unmask = not certificate.get("masked", True)
    run = rows.run_row(certificate)
    with engine.begin() as connection:
        old = connection.execute(sa.select(runs.c.id).where(runs.c.run_id == run["run_id"]))
        for (old_id,) in old.all():
            for table in (figures, checks, gpus):
                connection.execute(table.delete().where(table.c.run == old_id))
            connection.execute(runs.delete().where(runs.c.id == old_id))
        run_key = connection.execute(runs.insert().values(**run)).inserted_primary_key[0]
        for table, values in (
            (gpus, rows.gpu_rows(facts, unmask)),
            (checks, rows.check_rows(certificate, facts)),
            (figures, rows.figure_rows(certificate)),
        ):
            if values:
                connection.execute(table.insert(), [{**v, "run": run_key} for v in values])


def failing_sightings(
    engine: Engine, keys: list[str], except_run: str | None = None
) -> dict[str, list[Sighting]]:
    """For each board key (serial or UUID digest): the earlier runs where a check about that board
    failed, newest first."""
    keys = [k for k in keys if k]
    if not keys:
        return {}
    query = (
        sa.select(
            runs.c.node,
            runs.c.started_at,
            runs.c.run_id,
            checks.c.name,
            checks.c.message,
            gpus.c.idx,
            gpus.c.serial,
            gpus.c.serial_key,
            gpus.c.uuid_key,
        )
        .select_from(checks.join(runs, checks.c.run == runs.c.id))
        .join(gpus, sa.and_(gpus.c.run == runs.c.id, gpus.c.idx == checks.c.gpu))
        .where(checks.c.outcome == "fail")
        .where(sa.or_(gpus.c.serial_key.in_(keys), gpus.c.uuid_key.in_(keys)))
        .order_by(runs.c.started_at.desc())
    )
    found: dict[str, list[Sighting]] = {}
    with engine.connect() as connection:
        for row in connection.execute(query):
            if row.run_id == except_run:
                continue
            sighting = Sighting(
                row.node, row.started_at, row.name, row.message, row.idx, row.serial
            )
            for key in {row.serial_key, row.uuid_key} & set(keys):
                found.setdefault(key, []).append(sighting)
    return found


def node_names(engine: Engine) -> list[str]:
    with engine.connect() as connection:
        return list(
            connection.execute(sa.select(runs.c.node).distinct().order_by(runs.c.node)).scalars()
        )


def run_keys_for_board(engine: Engine, key: str) -> list[int]:
    query = sa.select(gpus.c.run).where(sa.or_(gpus.c.serial_key == key, gpus.c.uuid_key == key))
    with engine.connect() as connection:
        return sorted(set(connection.execute(query).scalars()))


def board_keys_for_tail(engine: Engine, tail: str) -> list[str]:
    """Boards whose shown serial or UUID ends with `tail` (what a masked report shows)."""
    query = sa.select(gpus.c.serial_key, gpus.c.uuid_key, gpus.c.serial, gpus.c.uuid)
    keys = set()
    with engine.connect() as connection:
        for row in connection.execute(query):
            if (row.serial or "").endswith(tail):
                keys.add(row.serial_key)
            if (row.uuid or "").endswith(tail):
                keys.add(row.uuid_key)
    return sorted(k for k in keys if k)


def load_runs(
    engine: Engine, node: str | None = None, run_keys: list[int] | None = None
) -> list[dict[str, Any]]:
    """Runs oldest first, each a dict of its row with `figures`, `failed` and `gpus` lists."""
    query = sa.select(runs).order_by(runs.c.started_at, runs.c.id)
    if node is not None:
        query = query.where(runs.c.node == node)
    if run_keys is not None:
        query = query.where(runs.c.id.in_(run_keys))
    with engine.connect() as connection:
        found = [dict(r._mapping) for r in connection.execute(query)]
        ids = [r["id"] for r in found]
        by_run = {i: {"figures": [], "failed": [], "gpus": []} for i in ids}
        if ids:
            for table, key, where in (
                (figures, "figures", True),
                (checks, "failed", checks.c.outcome == "fail"),
                (gpus, "gpus", True),
            ):
                query = sa.select(table).where(table.c.run.in_(ids)).where(where)
                for row in connection.execute(query.order_by(table.c.id)):
                    by_run[row.run][key].append(dict(row._mapping))
    for run in found:
        run.update(by_run[run["id"]])
    return found


def latest_certificates(engine: Engine) -> list[dict[str, Any]]:
    """The latest run's certificate of every node (what `rigcheck fleet --from-history` judges)."""
    latest: dict[str, dict[str, Any]] = {}
    for run in load_runs(engine):
        latest[run["node"]] = run  # oldest first: the last one kept is the newest
    return [json.loads(run["certificate"]) for _, run in sorted(latest.items())]
