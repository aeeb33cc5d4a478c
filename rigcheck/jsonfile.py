"""Reading rigcheck's JSON files (facts, specs, measurements, certificates) for a person."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def read_json(path: str | os.PathLike[str], what: str, error: type[Exception]) -> Any:
    """The parsed file; a missing or malformed one raises `error` naming the file and the spot."""
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise error(f"{path}: no such {what}") from None
    except IsADirectoryError:
        raise error(f"{path}: is a folder, not a {what}") from None
    except UnicodeDecodeError:
        raise error(f"{path}: not a {what} (not text: a binary file?)") from None
    except OSError as exc:
        raise error(f"{path}: cannot read the {what}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        raise error(f"{path}: not valid JSON ({where}: {exc.msg})") from None
