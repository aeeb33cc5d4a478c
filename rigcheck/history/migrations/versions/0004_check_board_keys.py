"""A failed check carries the digests of the GPU it is about (serial_key, uuid_key, indexed), so
that "seen failing before" reads a board's few failed checks. Through the GPU rows it read every
failure of the fleet and the runs table whole on PostgreSQL: 1.2 s of each run's record step at
1M stored runs, growing with the history (issue 43). Filled from the GPU rows in one statement.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

FILL = (
    "UPDATE checks SET {key} = (SELECT g.{key} FROM gpus g"
    " WHERE g.run = checks.run AND g.idx = checks.gpu) WHERE checks.gpu IS NOT NULL"
)


def upgrade() -> None:
    with op.batch_alter_table("checks") as batch:
        batch.add_column(sa.Column("serial_key", sa.String(64)))
        batch.add_column(sa.Column("uuid_key", sa.String(64)))
    for key in ("serial_key", "uuid_key"):
        op.execute(FILL.format(key=key))
        op.create_index(f"ix_checks_{key}", "checks", [key])


def downgrade() -> None:
    op.drop_index("ix_checks_uuid_key", "checks")
    op.drop_index("ix_checks_serial_key", "checks")
    with op.batch_alter_table("checks") as batch:
        batch.drop_column("uuid_key")
        batch.drop_column("serial_key")
