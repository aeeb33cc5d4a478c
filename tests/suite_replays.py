"""One run of the real suites in this process (pytester), read back from its junit XML: the
helper behind the replay fixtures of tests/boundaries, burnin, distributed, perf and replay.

In-process, not a subprocess: a subprocess pays about a second to import pytest's plugins again,
and the self-tests replay the suites over a thousand times. The spec files are read and validated
once per content (see `specs_read_once`), not on every run.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from junit_cases import Case, read_junit
from module_state import forget_unloaded_submodules

from rigcheck.testing.plugin_scan import narrowed

REPO = Path(__file__).resolve().parents[1]
SUITES = REPO / "suites"


@dataclass
class SuiteRun:
    ret: int
    cases: dict[str, Case]  # test name -> outcome, messages and recorded properties
    output: str  # stdout and stderr together
    result: pytest.RunResult


class SuiteRunner:
    """runner(target, *args, inputs={"--facts": data or path}) -> SuiteRun.

    Each input that is data (a dict or list, not a path) is written to a numbered JSON file
    first; every option is passed as one `--option=path` token, since a separate path would be
    read as a test path.
    """

    def __init__(self, pytester: pytest.Pytester, *common: str) -> None:
        self.pytester = pytester
        self.common = common  # options every run of this fixture takes
        self._runs = itertools.count()

    def __call__(self, target: Path, *args: str, inputs: dict[str, Any] | None = None) -> SuiteRun:
        n = next(self._runs)
        given = (inputs or {}).items()
        options = [self._option(o, value, n) for o, value in given if value is not None]
        junit = self.pytester.path / f"junit-{n}.xml"
        forget_unloaded_submodules()  # an earlier in-process run's imports must not leak in
        with specs_read_once(), narrowed():
            result = self.pytester.runpytest_inprocess(
                *options,
                *self.common,
                *args,  # after the common options, so a run can turn one back
                f"--junitxml={junit}",
                "-p",
                "no:cacheprovider",
                "--rootdir",
                str(REPO),
                str(target),
            )
        output = result.stdout.str() + "\n" + result.stderr.str()
        return SuiteRun(int(result.ret), read_junit(junit), output, result)

    def _option(self, option: str, value: Any, n: int) -> str:
        if isinstance(value, (dict, list)):  # data; anything else is a path already
            path = self.pytester.path / f"{option.strip('-')}-{n}.json"
            path.write_text(json.dumps(value))
            value = path
        return f"{option}={value}"


# Validated specs by the bytes they were read from: the same files give the same specs, and a
# changed or broken file (RIGCHECK_EXPECTED_DIR) is read and judged afresh.
_SPECS: dict[str, dict] = {}


@contextmanager
def specs_read_once() -> Iterator[None]:
    """rigcheck.plugin reads its specs through a cache for the length of one replay.

    rigcheck.spec keeps each file's schema verdict, so what is left to save is reading and
    checking the files again: 0.04 s of a 0.25 s replay (load_all warm; 0.72 s cold). Each run
    gets its own deep copy, so a run that changes a Spec cannot leak into the next one."""
    import rigcheck.plugin.core as plugin
    from rigcheck import spec

    original = plugin.load_all

    def load_all() -> dict:
        try:
            key = _spec_files_digest(spec.spec_dir(), spec.SCHEMA_FILE)
        except OSError:  # an unreadable spec file: rigcheck says so, as it would uncached
            return original()
        if key not in _SPECS:
            _SPECS[key] = original()  # a SpecError propagates, and nothing is cached
        return copy.deepcopy(_SPECS[key])

    plugin.load_all = load_all
    try:
        yield
    finally:
        plugin.load_all = original


def _spec_files_digest(folder: Path, schema: Path) -> str:
    digest = hashlib.sha256(str(folder.resolve()).encode())
    for path in [*sorted(folder.glob("*.json")), schema]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()
