"""A history store of N runs filled in bulk, sampled from one real quick-tier certificate
(data/h100-quick-certificate.json: `rigcheck check h100 --tier quick --facts F` on
`python -m rigcheck.testing.synthetic h100 --gpus 8 > F`, 2026-11-29).

How it samples a year of five-minute gate runs on 1,000 nodes (105M runs) down to N: NODES nodes,
N / NODES runs each, five minutes apart. Every run has the rows rigcheck writes for it (runs, its
8 GPUs with their board digests); 1 run in 100 fails (one check row naming GPU 3, certificate
kept; it read one new Xid 79 line: an events row, add_events); one run in 12 measured 16 figures
(an hourly tier between quick runs); each node keeps the certificates of its newest 10 passes, as
the store's retention does; each node's series hold their window. Rows are inserted as rows.py
makes them, with SQL, not through write_run: the store's size is what is under test, not the
fill. Grown stores (grow) repeat the filled pattern: the same 1% fail, 1 in 12 has figures."""

from __future__ import annotations

import copy
import datetime as dt
import json
from pathlib import Path

import sqlalchemy as sa

from rigcheck.history import rows, store
from rigcheck.history.retention import KEEP_PASSES
from rigcheck.history.schema import certificates, checks, figures, gpus, runs, series
from rigcheck.history.series import WINDOW
from rigcheck.spec import load_spec
from rigcheck.testing.synthetic import synthetic_snapshot

DATA = Path(__file__).with_name("data")
CERTIFICATE = DATA / "h100-quick-certificate.json"
NODES = 1000
GPUS = 8
EVERY = dt.timedelta(minutes=5)
END = dt.datetime(2026, 11, 28, tzinfo=dt.timezone.utc)
FIGURES = {"matmul_bf16_tflops": ("TFLOP/s", 700.0), "hbm_bandwidth_gbps": ("GB/s", 3000.0)}


def quick_run() -> tuple[dict, dict]:
    """(certificate, unmasked facts) of one 8-GPU H100 quick-tier run."""
    facts = synthetic_snapshot(load_spec("h100"), GPUS)
    return json.loads(CERTIFICATE.read_text()), facts


def node_name(i: int) -> str:
    return f"gpu-node-{i:04d}"


def run_of(certificate: dict, node: str, at: dt.datetime, fail: bool = False) -> dict:
    """The certificate as `node`'s run started `at` (and failing, when asked)."""
    made = copy.deepcopy(certificate)
    stamp = at.strftime("%Y-%m-%dT%H:%M:%SZ")
    made["run"].update(id=f"{stamp}-{node}", started_at=stamp)
    made["machine"]["host"]["hostname"] = node
    if fail:
        made["verdict"] = "fail"
        made["checks"][0].update(outcome="fail", message="Xid 79 on GPU 3 (0000:1b:00.0)")
    return made


def fill(url: str, total: int) -> None:
    engine = store.open_store(url)
    certificate, facts = quick_run()
    template = rows.run_row(certificate)
    body = store.pack(certificate)
    per_node = max(1, total // NODES)
    with engine.begin() as connection:
        for i in range(min(NODES, total)):
            _fill_node(connection, i, per_node, template, body, facts)
    engine.dispose()


def _fill_node(connection, i, count, template, body, facts) -> None:
    node = node_name(i)
    boards = [f"{node}-board-{g}" for g in range(GPUS)]
    keys = [(rows.board_key(b), rows.board_key(f"GPU-{b}")) for b in boards]
    base = connection.execute(sa.select(sa.func.coalesce(sa.func.max(runs.c.id), 0))).scalar()
    run_rows, gpu_rows, check_rows, figure_rows, kept = [], [], [], [], []
    recent: dict[str, list] = {}
    for n in range(count):
        run_key = base + n + 1
        at = (END - EVERY * (count - n)).strftime("%Y-%m-%dT%H:%M:%SZ")
        # Counted over the whole store, not the node: a 10,000-run fill has 10 runs a node, and
        # counting within a node made no run fail and one in 10 (not 12) measure figures.
        serial = i * count + n
        fail = serial % 100 == 99
        run_rows.append(
            {**template, "id": run_key, "run_id": f"{at}-{node}", "node": node,
             "started_at": at, "verdict": "fail" if fail else "pass"}
        )  # fmt: skip
        gpu_rows += [
            {"run": run_key, "idx": g, "serial": "masked…" + b[-4:], "uuid": "masked…" + b[-4:],
             "serial_key": s, "uuid_key": u}
            for g, (b, (s, u)) in enumerate(zip(boards, keys, strict=True))
        ]  # fmt: skip
        if fail:
            check_rows.append(
                {"run": run_key, "check_id": "x", "name": "test_no_machine_fault_xids",
                 "outcome": "fail", "gpu": 3, "message": "Xid 79 on GPU 3",
                 "serial_key": keys[3][0], "uuid_key": keys[3][1]}
            )  # fmt: skip
        if fail or n >= count - KEEP_PASSES:
            kept.append({"run": run_key, "body": body})
        if serial % 12 == 0:
            for g in range(GPUS):
                for figure, (unit, value) in FIGURES.items():
                    entry = {"figure": figure, "label": f"gpu{g}", "measured": value,
                             "unit": unit, "verdict": "pass"}  # fmt: skip
                    figure_rows.append({**entry, "run": run_key})
                    recent.setdefault(f"{figure} gpu{g}", [entry, []])[1].append([at, value])
    for table, values in (
        (runs, run_rows), (gpus, gpu_rows), (checks, check_rows), (figures, figure_rows),
        (certificates, kept),
    ):  # fmt: skip
        if values:
            connection.execute(table.insert(), values)
    if not recent:  # a node whose runs measured no figures: no series
        return
    connection.execute(
        series.insert(),
        [
            {"node": node, "series": key, "figure": e["figure"], "unit": e["unit"],
             "class_name": template["class_name"], "runs": len(points),
             "recent": json.dumps(points[-WINDOW:])}
            for key, (e, points) in recent.items()
        ],
    )  # fmt: skip


def grow(url: str, factor: int) -> None:
    """Make each node's history `factor` times as long, in SQL: copy k of the stored runs (their
    GPUs, failed checks, figures; a failure's certificate) to k x their span earlier. A filled
    store of 100,000 runs grown 10 times is 1,000 nodes x 1,000 runs. On PostgreSQL the secondary
    indexes are dropped while copying and built again after (a sort, not 8M random inserts), and
    the id sequences are moved past the copied ids, so that a run written after is a new row."""
    engine = store.open_store(url)  # migrated first: its columns are the ones copied
    postgres = engine.dialect.name == "postgresql"
    statements = [sql.format(moved=MOVED[engine.dialect.name]) for sql in GROW]
    with engine.begin() as connection:
        top = connection.execute(sa.text("SELECT max(id), count(*) FROM runs")).one()
        span = top[1] // NODES  # runs per node: each copy is that many five-minute steps earlier
        dropped = _drop_indexes(connection) if postgres else []
        for k in range(1, factor):
            shift = {"k": k, "ids": k * top[0], "minutes": f"-{k * span * 5} minutes"}
            for sql in statements:
                connection.execute(sa.text(sql), shift)
        for index in dropped:
            index.create(connection)
        if postgres:
            for table in (runs, gpus, checks, figures, series):
                connection.execute(
                    sa.text(f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "
                            f"(SELECT max(id) FROM {table.name}))")
                )  # fmt: skip
            connection.execute(sa.text("ANALYZE"))
    engine.dispose()


def _drop_indexes(connection) -> list[sa.Index]:
    found = [i for table in (runs, gpus, checks, figures) for i in table.indexes if not i.unique]
    for index in found:
        index.drop(connection)
    return found


# A run's start moved `:minutes` earlier, as ISO 8601 UTC text (the column's form).
MOVED = {
    "sqlite": "strftime('%Y-%m-%dT%H:%M:%SZ', started_at, :minutes)",
    "postgresql": "to_char(started_at::timestamp + CAST(:minutes AS interval),"
    ' \'YYYY-MM-DD"T"HH24:MI:SS"Z"\')',
}


def add_events(url: str) -> None:
    """The Xid 79 each failing run read, as the events row write_run stores for it."""
    engine = store.open_store(url)  # migrated: the events table is there
    with engine.begin() as connection:
        connection.execute(sa.text(EVENTS))
    engine.dispose()


EVENTS = (
    "INSERT INTO events (run, node, source, code, gpu, bus_id, serial, serial_key, at, line_key,"
    " text) SELECT c.run, r.node, 'xid', 79, g.idx, '0000:1b:00.0', g.serial, g.serial_key,"
    " r.started_at, r.run_id, 'GPU has fallen off the bus.' FROM checks c"
    " JOIN runs r ON r.id = c.run JOIN gpus g ON g.run = c.run AND g.idx = c.gpu"
    " WHERE c.outcome = 'fail' AND NOT EXISTS (SELECT 1 FROM events e WHERE e.run = c.run)"
)
GROW = (
    "INSERT INTO runs (id, run_id, node, class_name, origin, tier, verdict, exit_status,"
    " started_at, root_cause) SELECT id + :ids, run_id || '-' || :k, node, class_name, origin,"
    " tier, verdict, exit_status, {moved}, root_cause FROM runs WHERE id <= :ids / :k",
    "INSERT INTO gpus (run, idx, serial, uuid, serial_key, uuid_key) SELECT run + :ids, idx,"
    " serial, uuid, serial_key, uuid_key FROM gpus WHERE run <= :ids / :k",
    "INSERT INTO checks (run, check_id, name, outcome, gpu, message, serial_key, uuid_key)"
    " SELECT run + :ids, check_id, name, outcome, gpu, message, serial_key, uuid_key FROM checks"
    " WHERE run <= :ids / :k",
    "INSERT INTO figures (run, figure, label, measured, unit, verdict) SELECT run + :ids,"
    " figure, label, measured, unit, verdict FROM figures WHERE run <= :ids / :k",
    "INSERT INTO certificates (run, body) SELECT c.run + :ids, c.body FROM certificates c"
    " JOIN runs r ON r.id = c.run WHERE c.run <= :ids / :k AND r.verdict = 'fail'",
)
