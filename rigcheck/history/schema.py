"""The store's tables (SQLAlchemy Core). Changing them means a new alembic revision
(rigcheck/history/migrations/versions/), which a test compares with these definitions.

A run is rows a database indexes (runs, gpus, the checks that did not pass, figures); its whole
certificate is kept compressed and only for a while (certificates: failures, and each node's
newest passes); `series` holds each node's figure series pre-aggregated to a bounded window, so
that the check every run pays reads a few rows however long the history (issue 43). `events`
holds the kernel-log events (Xids, SXids, NVRM and amdgpu records, unexplained driver lines) a
run read, each line once per node however many runs read it again."""

from __future__ import annotations

from sqlalchemy import (
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
)

HEAD = "0004"  # the newest revision: a store at it is opened without running alembic

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
    Column("root_cause", Text),  # the certificate's root_cause line
    # The latest run per node and a node's newest runs, read from the index alone.
    Index("ix_runs_node_started_at", "node", "started_at"),
)

certificates = Table(
    "certificates",
    metadata,
    Column("run", Integer, ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    Column("body", LargeBinary, nullable=False),  # zlib of the certificate's JSON as written
)

series = Table(
    "series",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("node", String(255), nullable=False),
    Column("series", String(220), nullable=False),  # "figure label", e.g. "matmul_bf16_tflops gpu1"
    Column("figure", String(100), nullable=False),
    Column("unit", String(30)),
    Column("class_name", String(100)),  # of the latest run that measured it
    Column("runs", Integer, nullable=False),  # every run that measured it, not only the window's
    Column("recent", Text, nullable=False),  # JSON [[started_at, value], ...]: the newest WINDOW
    Index("ix_series_node_series", "node", "series", unique=True),
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
    Column("outcome", String(20), nullable=False),  # only checks that did not pass or skip
    Column("gpu", Integer),  # the GPU index the check is about, when it names one
    Column("message", Text),  # its first line
    # That GPU's digests (as gpus'): a board's failures found from its few failed checks, not
    # from every run it was in nor every failure of the fleet.
    Column("serial_key", String(64), index=True),
    Column("uuid_key", String(64), index=True),
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

events = Table(
    "events",
    metadata,
    Column("id", Integer, primary_key=True),
    # The first run that read the line: pruned with it.
    Column("run", Integer, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("node", String(255), nullable=False),
    Column("source", String(20), nullable=False),  # xid, sxid, nvrm, amdgpu, unexplained
    Column("kind", String(40)),  # an NVRM record's kind (fallen_off_bus, ...)
    Column("code", Integer),  # the Xid or SXid number
    Column("gpu", Integer),  # the index of the GPU at bus_id in that run, when one is
    Column("bus_id", String(20)),
    Column("serial", String(100)),  # that GPU's, masked as the certificate masks it
    Column("serial_key", String(64), index=True),  # as gpus.serial_key
    Column("t_s", Float),  # seconds since boot, as the kernel stamped the line
    Column("at", String(40)),  # ISO 8601 UTC: the run's start less (uptime - t_s); None unknown
    Column("line_key", String(64), nullable=False),  # sha256 of the line as read (line id)
    Column("text", Text),
    # A line read again by the next run is the same event: one row per node and line.
    Index("ix_events_node_line", "node", "line_key", unique=True),
    Index("ix_events_node_at", "node", "at"),
)
