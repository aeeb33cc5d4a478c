"""The real amdsmi Python package over a simulated libamd_smi.so, for rigcheck's self-tests.

The seam: amdsmi_wrapper.py loads the C library at import time with `ctypes.CDLL(path)` (7.x:
find_smi_library() tries $ROCM_HOME/lib, $ROCM_PATH/lib, the linker's path, then beside the
wrapper; 6.0-6.3: beside the wrapper, else $ROCM_PATH/lib, and 6.0 reads os.environ["ROCM_PATH"]
without a default). Without a library the import fails (KeyError 'libamd_smi.so', or KeyError
'ROCM_PATH' on 6.0). `import_amdsmi` imports the installed package afresh with ctypes.CDLL
answering that one path with a `SimulatedLibrary`; every other CDLL call is the real one, and
ctypes.CDLL is restored before it returns. The imported package is not left in sys.modules.

The runtime never imports this package; only the self-tests do.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import importlib.metadata
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from rigcheck.testing.amdsmi_sim.library import SimulatedLibrary
from rigcheck.testing.amdsmi_sim.node import Node

__all__ = ["Node", "SimulatedLibrary", "import_amdsmi"]


def import_amdsmi(node: Node, path: Path | None = None, symbols: set[str] | None = None,
                  rocm_path: str | None = "/opt/rocm") -> ModuleType:  # fmt: skip
    """An amdsmi package imported over a simulated libamd_smi that answers `node`.

    path: a folder holding another release's amdsmi (pip install --target; None: the installed
    one); symbols: what the simulated library exports (None: every name); rocm_path: $ROCM_PATH
    during the import (None: unset).
    """
    library = SimulatedLibrary(node.answer, symbols)
    with contextlib.ExitStack() as stack:
        stack.enter_context(_fresh_import("amdsmi"))
        stack.enter_context(_first_on_path(path))
        stack.enter_context(_cdll_answered_by(library))
        stack.enter_context(_env("ROCM_PATH", rocm_path))
        module = importlib.import_module("amdsmi")
        node.release = release_of(path)
    node.wrapper = module.amdsmi_wrapper
    return module


def release_of(path: Path | None) -> tuple[int, ...]:
    """The amdsmi release in `path` (from its dist-info), or the installed one's."""
    if path is None:
        text = importlib.metadata.version("amdsmi")
    else:
        info = sorted(Path(path).glob("amdsmi-*.dist-info"))
        if not info:
            raise FileNotFoundError(f"no amdsmi-*.dist-info in {path}")
        text = info[0].name.removeprefix("amdsmi-").removesuffix(".dist-info")
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


@contextlib.contextmanager
def _first_on_path(path: Path | None) -> Iterator[None]:
    if path is None:
        yield
        return
    sys.path.insert(0, str(path))
    try:
        yield
    finally:
        sys.path.remove(str(path))


@contextlib.contextmanager
def _fresh_import(package: str) -> Iterator[None]:
    """Import `package` anew, and leave sys.modules as it found it."""
    ours = {n: m for n, m in sys.modules.items() if n == package or n.startswith(package + ".")}
    for name in ours:
        del sys.modules[name]
    try:
        yield
    finally:
        for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
            del sys.modules[name]
        sys.modules.update(ours)


@contextlib.contextmanager
def _cdll_answered_by(library: SimulatedLibrary) -> Iterator[None]:
    real = ctypes.CDLL

    def cdll(name, *args, **kwargs):  # type: ignore[no-untyped-def]
        if str(name).endswith("libamd_smi.so"):
            return library
        return real(name, *args, **kwargs)

    ctypes.CDLL = cdll  # type: ignore[misc]
    try:
        yield
    finally:
        ctypes.CDLL = real  # type: ignore[misc]


@contextlib.contextmanager
def _env(name: str, value: str | None) -> Iterator[None]:
    before = os.environ.get(name)
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before
