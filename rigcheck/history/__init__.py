"""Fleet memory: every run kept in a database, a GPU's history by serial, trends, Prometheus.

The store is SQLAlchemy (SQLite by default, any URL for a fleet), its schema migrated by alembic;
nothing here is imported by a run until the run has written its certificate.
"""
