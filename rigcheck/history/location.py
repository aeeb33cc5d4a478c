"""Where the history store is: `--history URL`, else $RIGCHECK_HISTORY, else the data folder."""

from __future__ import annotations

import os
from pathlib import Path

ENV = "RIGCHECK_HISTORY"
OFF = "none"  # `--history none` or RIGCHECK_HISTORY=none: keep no history for this run


def data_folder() -> Path:
    """XDG's data folder: $XDG_DATA_HOME, else ~/.local/share (the XDG Base Directory default)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "rigcheck"


def default_url() -> str:
    return f"sqlite:///{data_folder() / 'history.db'}"


def store_url(chosen: str | None = None) -> str | None:
    """The SQLAlchemy URL of the store, or None when history is switched off."""
    # A blank setting (`RIGCHECK_HISTORY=` in an env file) is unset, as $RIGCHECK_REPORT_DIR's:
    # "   " was "Could not parse SQLAlchemy URL".
    url = chosen or os.environ.get(ENV, "").strip() or default_url()
    return None if url.strip().lower() == OFF else url


def shown_url(url: str) -> str:
    """The URL for messages, without a password."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # an unparsable URL is shown as given: it has no password to hide
        return url


def missing_store_file(url: str) -> str | None:
    """A SQLite store's file when it does not exist: reading must not create one (`rigcheck
    history --history sqlite:///typo.db` made an empty store there and showed "0 runs")."""
    from sqlalchemy.engine import make_url

    try:
        parsed = make_url(url)
    except Exception:  # an unparsable URL: open_store says so
        return None
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    path = Path(parsed.database).expanduser()
    return None if path.exists() else str(path)
