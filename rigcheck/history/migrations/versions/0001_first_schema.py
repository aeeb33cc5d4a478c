"""The first schema: runs, their GPUs, checks and figures.

Revision ID: 0001
Revises:
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def _run_fk() -> sa.Column:
    return sa.Column(
        "run", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, index=True
    )


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.String(300), nullable=False, unique=True),
        sa.Column("node", sa.String(255), nullable=False, index=True),
        sa.Column("class_name", sa.String(100)),
        sa.Column("origin", sa.String(20)),
        sa.Column("tier", sa.String(50)),
        sa.Column("verdict", sa.String(20), nullable=False),
        sa.Column("exit_status", sa.Integer),
        sa.Column("started_at", sa.String(40), nullable=False, index=True),
        sa.Column("certificate", sa.Text, nullable=False),
    )
    op.create_table(
        "gpus",
        sa.Column("id", sa.Integer, primary_key=True),
        _run_fk(),
        sa.Column("idx", sa.Integer, nullable=False),
        sa.Column("serial", sa.String(100)),
        sa.Column("uuid", sa.String(100)),
        sa.Column("serial_key", sa.String(64), index=True),
        sa.Column("uuid_key", sa.String(64), index=True),
    )
    op.create_table(
        "checks",
        sa.Column("id", sa.Integer, primary_key=True),
        _run_fk(),
        sa.Column("check_id", sa.Text, nullable=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("outcome", sa.String(20), nullable=False),
        sa.Column("gpu", sa.Integer),
        sa.Column("message", sa.Text),
    )
    op.create_table(
        "figures",
        sa.Column("id", sa.Integer, primary_key=True),
        _run_fk(),
        sa.Column("figure", sa.String(100), nullable=False),
        sa.Column("label", sa.String(100)),
        sa.Column("measured", sa.Float, nullable=False),
        sa.Column("unit", sa.String(30)),
        sa.Column("verdict", sa.String(20)),
    )


def downgrade() -> None:
    for table in ("figures", "checks", "gpus", "runs"):
        op.drop_table(table)
