"""Where pytest-benchmark writes a run's benchmark.json (the run folder's copy of its timings)."""

from __future__ import annotations

from pathlib import Path


class BenchmarkJson:
    """benchmark.json as pytest-benchmark's --benchmark-json value, for every version rigcheck
    allows: up to 5.2 it is an open file (`with json as fh`), from 5.3 a path (`open(json)`)."""

    def __init__(self, path: Path):
        self.path = path
        self._file = None

    def __fspath__(self) -> str:
        return str(self.path)

    def __str__(self) -> str:
        return str(self.path)

    def __enter__(self):
        self._file = open(self.path, "wb")
        return self._file

    def __exit__(self, *exc: object) -> None:
        self._file.close()
