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
    url = chosen or os.environ.get(ENV) or default_url()
    return None if url.strip().lower() == OFF else url


def shown_url(url: str) -> str:
    """The URL for messages, without a password."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # an unparsable URL is shown as given: it has no password to hide
        return url
