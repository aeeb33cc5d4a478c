"""The store's tables (SQLAlchemy Core). Changing them means a new alembic revision
(rigcheck/history/migrations/versions/), which a test compares with these definitions."""

from __future__ import annotations

from sqlalchemy import Column, Float, ForeignKey, Integer, MetaData, String, Table, Text

metadata = MetaData()

runs = Table(
    "runs",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", String(300), nullable=False, unique=True),  # the report folder's name
    Column("node", String(255), nullable=False, index=True),  # the host name the run recorded
    Column("class_name", String(100)),
    Column("origin", String(20)),  # the facts': live, recorded (a replayed snapshot), synthetic
    Column("tier", String(50)),  # the run's tier, where the certificate states one
    Column("verdict", String(20), nullable=False),
    Column("exit_status", Integer),
    Column("started_at", String(40), nullable=False, index=True),  # ISO 8601 UTC: sorts as text
    Column("certificate", Text, nullable=False),  # the certificate as written (masked unless not)
)

gpus = Table(
    "gpus",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("run", Integer, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("idx", Integer, nullable=False),
    Column("serial", String(100)),  # masked as the certificate masks it
    Column("uuid", String(100)),  # masked as the certificate masks it
    Column("serial_key", String(64), index=True),  # sha256 of the full serial: finds a board again
    Column("uuid_key", String(64), index=True),
)

checks = Table(
    "checks",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("run", Integer, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("check_id", Text, nullable=False),
    Column("name", Text, nullable=False),
    Column("outcome", String(20), nullable=False),
    Column("gpu", Integer),  # the GPU index the check is about, when it names one
    Column("message", Text),  # its first line
)

figures = Table(
    "figures",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("run", Integer, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("figure", String(100), nullable=False),
    Column("label", String(100)),  # which device, e.g. gpu1
    Column("measured", Float, nullable=False),
    Column("unit", String(30)),
    Column("verdict", String(20)),
)
