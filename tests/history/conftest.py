"""The history tests' store: a fresh SQLite file per test (the PostgreSQL tests bring their own)."""

import pytest


@pytest.fixture
def url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'history.db'}"
