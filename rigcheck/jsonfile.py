"""Reading rigcheck's JSON files (facts, specs, measurements, certificates) for a person."""

from __future__ import annotations

import json
import os
from typing import Any

# Far above any file rigcheck writes (a facts snapshot or certificate is well under 1 MiB): a
# device named as a file (`--facts /dev/zero`) was read until memory ran out.
MAX_BYTES = 256 * 2**20


def read_capped(path: str | os.PathLike[str], limit: int | None = None) -> str:
    """A text file's content; ValueError when it holds more than LIMIT (MAX_BYTES) bytes."""
    limit = MAX_BYTES if limit is None else limit
    with open(path, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"more than {limit // 2**20} MiB: no file of this kind is (a device?)")
    return data.decode()


def read_json(path: str | os.PathLike[str], what: str, error: type[Exception]) -> Any:
    """The parsed file; a missing or malformed one raises `error` naming the file and the spot."""
    try:
        return json.loads(read_capped(path))
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
    except (ValueError, RecursionError) as exc:  # too big, a 5,000-digit number, nested too deep
        reason = str(exc).split(";")[0] or type(exc).__name__
        raise error(f"{path}: not a {what} ({reason})") from None
