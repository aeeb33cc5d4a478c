"""Checking a path the user named for output before anything is written there.

rigcheck creates no folder the user did not ask for, and says in one line what is wrong.
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

IN_A_WRITABLE_FOLDER = "name a file in a folder you can write"


def output_problem(path: str | os.PathLike[str], option: str = "-o") -> str | None:
    """Why PATH cannot be written as a new or replaced file, or None."""
    target = Path(path).expanduser()
    shown = f"{option} {path}"
    if target.is_dir():
        return f"{shown}: is a folder; name a file in it, e.g. {target / 'out.json'}"
    if target.exists() and (not target.is_file() or _a_device_name(target)):
        return f"{shown}: {not_a_file(target)}"
    parent = target.parent
    if not parent.exists():
        missing = next(p for p in [parent, *parent.parents] if p.parent.exists())
        if missing.parent.is_file() or any(p.is_file() for p in parent.parents):
            return f"{shown}: {_first_file(parent)} is a file, not a folder"
        if cannot_write_in(missing.parent):  # mkdir -p would fail there too (/proc)
            return f"{shown}: cannot write in {missing.parent}; {IN_A_WRITABLE_FOLDER}"
        return f"{shown}: the folder {parent} does not exist; create it first (mkdir -p {parent})"
    if not parent.is_dir():
        return f"{shown}: {parent} is a file, not a folder"
    if cannot_write_in(parent):
        return f"{shown}: cannot write in {parent}; {IN_A_WRITABLE_FOLDER}"
    return None


def folder_problem(path: str | os.PathLike[str], option: str) -> str | None:
    """Why OPTION PATH cannot be the folder an output goes in (made if missing), or None.
    Checked before any work, so that a typo is said at once and not as "File exists" at the end.
    Nothing is created here."""
    target = Path(path).expanduser()
    shown = f"{option} {path}"
    if target.exists() and not target.is_dir():
        what = "a file" if target.is_file() and not _a_device_name(target) else "a device or a pipe"
        return f"{shown}: is {what}, not a folder; name a folder (it is created if missing)"
    existing = next(p for p in [target, *target.parents] if p.exists() or p == p.parent)
    if not existing.is_dir():
        return f"{shown}: {existing} is a file, so the folder cannot be made there; name a folder"
    if cannot_write_in(existing):
        return f"{shown}: cannot write in {existing}; name a folder you can write"
    return None


def not_a_file(target: Path) -> str:
    """Why TARGET, which exists and is neither a file nor a folder, is not written: rigcheck
    writes through a temporary file renamed over the target, and as root `report -o /dev/full`
    replaced the device with the page (and /dev/stdout's link the same way)."""
    return "not a regular file (a device or a pipe); name a file"


def _a_device_name(target: Path) -> bool:
    """/dev/stdout redirected to a file is a regular file through /proc/self/fd/1; renaming
    over it would replace the link in /dev."""
    return str(target.absolute()).startswith("/dev/") or str(target.resolve()).startswith(
        ("/proc/", "/dev/")
    )


def cannot_write_in(folder: Path) -> bool:
    """No write permission, or a kernel file system (root may "write" there, but not a file)."""
    kernel = str(folder.resolve()).startswith(("/proc", "/sys"))
    return kernel or not os.access(folder, os.W_OK | os.X_OK)


def _first_file(path: Path) -> Path:
    return next(p for p in [*reversed(path.parents), path] if p.is_file())


def holds_another_kind(
    path: str | os.PathLike[str], option: str, kind: str, ours: Callable[[str], bool]
) -> str | None:
    """Why OPTION PATH must not be written over: a file is there that holds no KIND (`report
    run -o run/certificate.json` wrote the page over the certificate; `fit --config config.json
    -o config.json` the plan over the model's config). A KIND written before is replaced:
    writing it again is what the option is for."""
    target = Path(path).expanduser()
    if not target.is_file():
        return None
    try:
        with target.open("rb") as handle:
            text = handle.read(2**20).decode()
    except (OSError, UnicodeDecodeError):
        text = None
    if text is not None and ours(text):
        return None
    return f"{option} {path}: that file is there and is no {kind}: name a new file (it is kept)"


def json_with(*keys: str) -> Callable[[str], bool]:
    """A test for holds_another_kind: a JSON object that has KEYS."""

    def test(text: str) -> bool:
        try:
            value = json.loads(text)
        except ValueError:
            return False
        return isinstance(value, dict) and set(keys) <= value.keys()

    return test


def is_html(text: str) -> bool:
    return text.lstrip().lower().startswith(("<!doctype html", "<html"))


def write_atomic(path: Path, text: str) -> None:
    """Write through a temporary file and os.replace: a reader never sees half a file. Never
    over a device or a pipe (rigcheck.paths.not_a_file)."""
    if path.exists() and not path.is_file() and not path.is_dir():
        raise OSError(errno.EEXIST, not_a_file(path), str(path))
    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", delete=False
    ) as tmp:
        try:
            tmp.write(text)
            tmp.flush()  # a full disk fails here, inside the try, not at close
        except BaseException:
            _discard(tmp)
            raise
    os.chmod(tmp.name, 0o644)  # a report is for reading: not the 0600 of a temporary file
    os.replace(tmp.name, path)


def _discard(tmp: Any) -> None:
    """Remove a temporary file that could not be written: nothing half-written is left."""
    try:
        tmp.close()  # flushes what is buffered: fails again on a full disk
    except OSError:
        pass
    finally:
        os.unlink(tmp.name)
