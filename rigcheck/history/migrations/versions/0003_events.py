"""Kernel-log events as rows: the Xids, SXids, NVRM and amdgpu records a run read, one row per
node and log line (the next run reads the same line again), pruned with the run that first read
them. Stores written before keep no events for their runs: those are only in the failing
checks' messages, as they were.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "events",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("node", sa.String(255), nullable=False),
        sa.Column("source", sa.String(20), nullable=False),
        sa.Column("kind", sa.String(40)),
        sa.Column("code", sa.Integer),
        sa.Column("gpu", sa.Integer),
        sa.Column("bus_id", sa.String(20)),
        sa.Column("serial", sa.String(100)),
        sa.Column("serial_key", sa.String(64)),
        sa.Column("t_s", sa.Float),
        sa.Column("at", sa.String(40)),
        sa.Column("line_key", sa.String(64), nullable=False),
        sa.Column("text", sa.Text),
    )
    op.create_index("ix_events_run", "events", ["run"])
    op.create_index("ix_events_serial_key", "events", ["serial_key"])
    op.create_index("ix_events_node_line", "events", ["node", "line_key"], unique=True)
    op.create_index("ix_events_node_at", "events", ["node", "at"])


def downgrade() -> None:
    op.drop_table("events")
