"""Runs as rows, certificates compressed beside them, figure series pre-aggregated (issue 43).

The certificate leaves `runs` for `certificates` (zlib), each run's root cause becomes a column,
the checks that passed or skipped are no longer rows (nothing reads them: the certificate has
them), and `series` is filled from the stored figures. Every stored certificate is kept:
`rigcheck history prune` trims old ones.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

import json
import zlib

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

BATCH = 500  # runs copied per round: the migration's memory stays flat on a large store


def upgrade() -> None:
    op.create_table(
        "certificates",
        sa.Column(
            "run", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("body", sa.LargeBinary, nullable=False),
    )
    op.create_table(
        "series",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("node", sa.String(255), nullable=False),
        sa.Column("series", sa.String(220), nullable=False),
        sa.Column("figure", sa.String(100), nullable=False),
        sa.Column("unit", sa.String(30)),
        sa.Column("class_name", sa.String(100)),
        sa.Column("runs", sa.Integer, nullable=False),
        sa.Column("recent", sa.Text, nullable=False),
    )
    op.create_index("ix_series_node_series", "series", ["node", "series"], unique=True)
    op.add_column("runs", sa.Column("root_cause", sa.Text))
    op.create_index("ix_runs_node_started_at", "runs", ["node", "started_at"])
    _move_certificates(op.get_bind())
    _fill_series(op.get_bind())
    op.execute("DELETE FROM checks WHERE outcome IN ('pass', 'skip')")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("certificate")


def _move_certificates(bind: sa.Connection) -> None:
    last = 0
    while True:
        found = bind.execute(
            sa.text("SELECT id, certificate FROM runs WHERE id > :last ORDER BY id LIMIT :n"),
            {"last": last, "n": BATCH},
        ).all()
        if not found:
            return
        for run, text in found:
            cause = json.loads(text).get("root_cause")
            bind.execute(
                sa.text("UPDATE runs SET root_cause = :cause WHERE id = :run"),
                {"cause": cause if isinstance(cause, str) else None, "run": run},
            )
        bind.execute(
            sa.text("INSERT INTO certificates (run, body) VALUES (:run, :body)"),
            [{"run": run, "body": zlib.compress(text.encode())} for run, text in found],
        )
        last = found[-1][0]


def _fill_series(bind: sa.Connection) -> None:
    """Each node's series from its figures, oldest first, the newest WINDOW values kept."""
    from rigcheck.history.series import fold

    query = sa.text(
        "SELECT r.node, r.class_name, r.started_at, f.figure, f.label, f.measured, f.unit "
        "FROM figures f JOIN runs r ON f.run = r.id ORDER BY r.node, r.started_at, r.id, f.id"
    )
    node, found = None, {}
    for row in bind.execute(query):
        if row.node != node:
            _insert_series(bind, node, found)
            node, found = row.node, {}
        fold(found, row.class_name, row.started_at, row._mapping)
    _insert_series(bind, node, found)


def _insert_series(bind: sa.Connection, node: str | None, found: dict) -> None:
    if node is None or not found:
        return
    bind.execute(
        sa.text(
            "INSERT INTO series (node, series, figure, unit, class_name, runs, recent) "
            "VALUES (:node, :series, :figure, :unit, :class_name, :runs, :recent)"
        ),
        [
            {**entry, "node": node, "recent": json.dumps(entry["recent"])}
            for entry in found.values()
        ],
    )


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("certificate", sa.Text, nullable=False, server_default="{}"))
    bind = op.get_bind()
    for run, body in bind.execute(sa.text("SELECT run, body FROM certificates")).all():
        bind.execute(
            sa.text("UPDATE runs SET certificate = :text WHERE id = :run"),
            {"text": zlib.decompress(body).decode(), "run": run},
        )
    op.drop_index("ix_runs_node_started_at", "runs")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("root_cause")
    op.drop_index("ix_series_node_series", "series")
    op.drop_table("series")
    op.drop_table("certificates")
