"""The history store: open (and migrate) it, write a run, read runs back.

Readers read only what they show: rows and figures, never certificates, except for the one
certificate per node that `rigcheck fleet --from-history` judges."""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine, make_url

from rigcheck.history import rows
from rigcheck.history.events import event_rows, write_events
from rigcheck.history.retention import keep_passes
from rigcheck.history.schema import HEAD, certificates, checks, events, figures, gpus, runs
from rigcheck.history.series import update_series

MIGRATIONS = Path(__file__).with_name("migrations")
# A database server that does not answer must not hold a finished run for minutes (TCP's own
# connect timeout): its drivers' connect_timeout, in seconds, unless the URL sets one.
CONNECT_TIMEOUT_S = 10
SERVER_BACKENDS = ("postgresql", "mysql", "mariadb")
NOT_STORED = ("pass", "skip")  # check outcomes that are no rows: the certificate has them
NO_KEYS = {"serial_key": None, "uuid_key": None}  # a check about the machine, or an unknown GPU


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
        file = Path(parsed.database).expanduser()
        not_sqlite(file)
        file.parent.mkdir(parents=True, exist_ok=True)
    with engine.begin() as connection:
        migrate(connection)
    return engine


SQLITE_HEADER = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database file


def not_sqlite(file: Path) -> None:
    """Refuse a file that holds something else: SQLite takes a file under its 100-byte header
    for an empty database and writes its tables over it (issue 38: a 1-byte file was replaced)."""
    if file.exists() and not file.is_file() and not file.is_dir():
        # a device (/dev/full): SQLite left its journal beside it, in /dev
        raise ValueError(f"{file}: not a regular file (a device?); name the store's file")
    if not file.is_file() or file.stat().st_size == 0:
        return
    with file.open("rb") as handle:
        if handle.read(len(SQLITE_HEADER)) != SQLITE_HEADER:
            raise ValueError(
                f"{file} is not an SQLite database; name the store's file, or a new one"
            )


def connect_args(parsed: sa.URL) -> dict[str, Any]:
    if parsed.get_backend_name() in SERVER_BACKENDS and "connect_timeout" not in parsed.query:
        return {"connect_timeout": CONNECT_TIMEOUT_S}
    return {}


def migrate(connection: Connection) -> None:
    """Run alembic only when the store is not at HEAD: its import and scripts cost more than
    the rest of a run's record step."""
    if revision(connection) == HEAD:
        return
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    command.upgrade(config, "head")


def revision(connection: Connection) -> str | None:
    if not sa.inspect(connection).has_table("alembic_version"):
        return None
    return connection.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()


def write_run(engine: Engine, certificate: dict[str, Any], facts: dict[str, Any]) -> None:
    """One run with its GPUs, failed checks, figures and the kernel-log events no earlier run
    stored, its certificate compressed, its figures folded into the node's series; a run written
    again replaces itself."""
    unmask = not certificate.get("masked", True)
    run = rows.run_row(certificate)
    figure_rows = rows.figure_rows(certificate)
    gpu_rows = rows.gpu_rows(facts, unmask)
    keys = {g["idx"]: {"serial_key": g["serial_key"], "uuid_key": g["uuid_key"]} for g in gpu_rows}
    check_rows = [
        {**c, **keys.get(c["gpu"], NO_KEYS)}
        for c in rows.check_rows(certificate, facts)
        if c["outcome"] not in NOT_STORED
    ]
    read = event_rows(facts, run["node"], run["started_at"], unmask)
    with engine.begin() as connection:
        old = connection.execute(sa.select(runs.c.id).where(runs.c.run_id == run["run_id"]))
        delete_runs(connection, [old_id for (old_id,) in old.all()])
        run_key = connection.execute(runs.insert().values(**run)).inserted_primary_key[0]
        for table, values in (
            (gpus, gpu_rows),
            (checks, check_rows),
            (figures, figure_rows),
        ):
            if values:
                connection.execute(table.insert(), [{**v, "run": run_key} for v in values])
        write_events(connection, run_key, read)
        connection.execute(certificates.insert().values(run=run_key, body=pack(certificate)))
        update_series(connection, run["node"], run["class_name"], run["started_at"], figure_rows)
        drop_old_pass_certificates(connection, run["node"], keep_passes())


def pack(certificate: dict[str, Any]) -> bytes:
    return zlib.compress(json.dumps(certificate, separators=(",", ":")).encode(), 6)


def unpack(body: bytes) -> dict[str, Any]:
    return json.loads(zlib.decompress(body))


def delete_runs(connection: Connection, ids: list[int]) -> None:
    if not ids:
        return
    for table in (events, figures, checks, gpus, certificates):
        connection.execute(table.delete().where(table.c.run.in_(ids)))
    connection.execute(runs.delete().where(runs.c.id.in_(ids)))


def drop_old_pass_certificates(connection: Connection, node: str | None, keep: int) -> int:
    """Certificates of passing runs past each node's newest `keep` (of one node, or all)."""
    kept = (
        sa.select(runs.c.id, runs.c.node, runs.c.verdict)
        .select_from(runs.join(certificates, certificates.c.run == runs.c.id))
        .add_columns(
            sa.func.row_number()
            .over(partition_by=runs.c.node, order_by=(runs.c.started_at.desc(), runs.c.id.desc()))
            .label("newest")
        )
        .where(runs.c.verdict == "pass")
    )
    if node is not None:
        kept = kept.where(runs.c.node == node)
    ranked = kept.subquery()
    old = sa.select(ranked.c.id).where(ranked.c.newest > keep)
    return connection.execute(certificates.delete().where(certificates.c.run.in_(old))).rowcount


def failing_sightings(
    engine: Engine, keys: list[str], except_run: str | None = None
) -> dict[str, list[Sighting]]:
    """For each board key (serial or UUID digest): the earlier runs where a check about that board
    failed, newest first."""
    keys = [k for k in keys if k]
    if not keys:
        return {}
    # From the failed checks' own digests (their index): a board's few failures, whatever the
    # size of the history; the run and the GPU row only for those.
    query = (
        sa.select(
            runs.c.node,
            runs.c.started_at,
            runs.c.run_id,
            checks.c.name,
            checks.c.message,
            checks.c.gpu.label("idx"),
            gpus.c.serial,
            checks.c.serial_key,
            checks.c.uuid_key,
        )
        .select_from(checks.join(runs, checks.c.run == runs.c.id))
        .outerjoin(gpus, sa.and_(gpus.c.run == checks.c.run, gpus.c.idx == checks.c.gpu))
        .where(checks.c.outcome == "fail")
        .where(sa.or_(checks.c.serial_key.in_(keys), checks.c.uuid_key.in_(keys)))
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


def node_names(engine: Engine, limit: int | None = None) -> list[str]:
    query = sa.select(runs.c.node).distinct().order_by(runs.c.node).limit(limit)
    with engine.connect() as connection:
        return list(connection.execute(query).scalars())


def has_node(engine: Engine, node: str) -> bool:
    query = sa.select(runs.c.id).where(runs.c.node == node).limit(1)
    with engine.connect() as connection:
        return connection.execute(query).first() is not None


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
    engine: Engine,
    node: str | None = None,
    run_keys: sa.Select | list[int] | None = None,
    last: int | None = None,
) -> list[dict[str, Any]]:
    """The newest `last` runs (all when None), oldest first, each a dict of its row with
    `figures`, `failed` and `gpus` lists. `run_keys`: run ids, or a query that selects them."""
    query = sa.select(runs).order_by(runs.c.started_at.desc(), runs.c.id.desc()).limit(last)
    if node is not None:
        query = query.where(runs.c.node == node)
    if run_keys is not None:
        query = query.where(runs.c.id.in_(run_keys))
    with engine.connect() as connection:
        found = [dict(r._mapping) for r in connection.execute(query)][::-1]
        by_run = {r["id"]: {"figures": [], "failed": [], "gpus": []} for r in found}
        for chunk in _chunks(list(by_run)):
            for table, key, where in (
                (figures, "figures", True),
                (checks, "failed", checks.c.outcome == "fail"),
                (gpus, "gpus", True),
            ):
                query = sa.select(table).where(table.c.run.in_(chunk)).where(where)
                for row in connection.execute(query.order_by(table.c.id)):
                    by_run[row.run][key].append(dict(row._mapping))
    for run in found:
        run.update(by_run[run["id"]])
    return found


def _chunks(ids: list[int], size: int = 900) -> Iterator[list[int]]:
    """IN lists under SQLite's bound-parameter limit (999 before 3.32)."""
    for start in range(0, len(ids), size):
        yield ids[start : start + size]


def count_runs(engine: Engine, node: str | None = None) -> int:
    query = sa.select(sa.func.count()).select_from(runs)
    if node is not None:
        query = query.where(runs.c.node == node)
    with engine.connect() as connection:
        return connection.execute(query).scalar_one()


def board_runs(keys: list[str]) -> sa.Select:
    """The ids of runs that had one of these boards (serial or UUID digests)."""
    return sa.select(gpus.c.run).where(
        sa.or_(gpus.c.serial_key.in_(keys), gpus.c.uuid_key.in_(keys))
    )


def latest_runs(engine: Engine) -> Iterator[dict[str, Any]]:
    """Each node's latest run with its certificate (None where pruned), by node name, read from
    the (node, started_at) index: a walk from node name to the next (a recursive query), and each
    node's newest entry. GROUP BY node is a scan of every run on PostgreSQL, which has no skip
    scan: 1.4 s of the fleet's query at 1M runs, growing with the history (issue 43)."""
    with engine.connect() as connection:
        for row in connection.execute(latest_query().execution_options(yield_per=200)):
            body = row.body
            yield {**row._mapping, "certificate": unpack(body) if body is not None else None}


def latest_query() -> sa.Select:
    first = sa.select(sa.func.min(runs.c.node).label("node"))
    nodes = first.cte("nodes", recursive=True)
    after = sa.select(sa.func.min(runs.c.node)).where(runs.c.node > nodes.c.node)
    nodes = nodes.union_all(sa.select(after.scalar_subquery()).where(nodes.c.node.is_not(None)))
    newest = runs.alias("newest")
    latest = (
        sa.select(newest.c.id)
        .where(newest.c.node == nodes.c.node)
        # Two runs of a node started in the same second: the later written.
        .order_by(newest.c.started_at.desc(), newest.c.id.desc())
        .limit(1)
        .scalar_subquery()
    )
    return (
        sa.select(runs.c.id, runs.c.run_id, runs.c.node, runs.c.started_at, certificates.c.body)
        .select_from(nodes)
        .join(runs, runs.c.id == latest)
        .outerjoin(certificates, certificates.c.run == runs.c.id)
        .order_by(runs.c.node)
    )


def latest_certificates(engine: Engine) -> list[dict[str, Any]]:
    """The latest run's certificate of every node (what `rigcheck fleet --from-history` judges)."""
    return [run["certificate"] for run in latest_runs(engine) if run["certificate"] is not None]


def certificate_of(engine: Engine, run_key: int) -> dict[str, Any] | None:
    query = sa.select(certificates.c.body).where(certificates.c.run == run_key)
    with engine.connect() as connection:
        body = connection.execute(query).scalar()
    return unpack(body) if body is not None else None


def prune(engine: Engine, older_than: str | None, keep: int) -> tuple[int, int]:
    """Delete runs started before `older_than` (ISO 8601 UTC), then the certificates of passing
    runs past each node's newest `keep`: (runs deleted, certificates deleted). The series keep
    their windows: drift still has its baseline."""
    with engine.begin() as connection:
        gone = 0
        if older_than is not None:
            old = sa.select(runs.c.id).where(runs.c.started_at < older_than)
            ids = list(connection.execute(old).scalars())
            for chunk in _chunks(ids):
                delete_runs(connection, chunk)
            gone = len(ids)
        return gone, drop_old_pass_certificates(connection, None, keep)
