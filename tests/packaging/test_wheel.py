"""The wheel carries the suites and spec files, and `rigcheck check` is `pytest -m CLASS`."""

from __future__ import annotations

import configparser
import json
import os
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from rigcheck import check, layout

ROOT = Path(__file__).resolve().parents[2]


def test_clone_layout_finds_suites_and_specs_beside_the_package():
    assert layout.SUITES_DIR == ROOT / "suites"
    assert layout.SPEC_DIR == ROOT / "expected"
    assert layout.ROOT_DIR == ROOT and not layout.INSTALLED


def test_check_ini_says_what_pyproject_says_plus_the_plugin():
    pyproject = toml_values(ROOT / "pyproject.toml")
    ini = configparser.ConfigParser()
    ini.read(layout.CHECK_INI)
    clone = shlex.split(pyproject["addopts"])
    packaged = shlex.split(ini["pytest"]["addopts"])
    self_tests_only = ["-p", "pytester"]
    assert [a for a in clone if a not in self_tests_only] == [
        a for a in packaged if a not in ("-p", "rigcheck.plugin")
    ]
    assert "rigcheck.plugin" in packaged
    assert ini["pytest"]["xfail_strict"] == pyproject["xfail_strict"]


@pytest.mark.parametrize(
    ("argv", "marker"),
    [(["cpu"], ["-m", "cpu"]), (["-q"], []), (["h100", "-k", "x"], ["-m", "h100"])],
)
def test_check_runs_pytest_on_the_suites_with_the_class_as_marker(argv, marker):
    args = check.pytest_args(argv)
    suites = args.index(str(layout.SUITES_DIR))
    assert args[suites + 1 : suites + 1 + len(marker)] == marker
    assert args[args.index("--rootdir") + 1] == str(layout.ROOT_DIR)
    assert args[-1] == argv[-1] or not marker


def test_wheel_ships_every_suite_and_spec_file(tmp_path):
    backend = toml_values(ROOT / "pyproject.toml")["requires"].strip('[]"')
    floor = int(backend.partition(">=")[2].split(".")[0])
    if int(setuptools_version().split(".")[0]) < floor:
        pytest.skip(f"this environment's setuptools is older than the build needs ({backend})")
    # Built from a copy: setuptools' build/ folder in the checkout could hold stale files.
    source = tmp_path / "src"
    for name in ("pyproject.toml", "setup.py", "README.md"):
        copy(ROOT / name, source / name)
    for name in ("rigcheck", "suites", "expected"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(source),
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
        ],
        check=True,
        cwd=tmp_path,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("rigcheck-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    wanted = [f"rigcheck/{p.relative_to(ROOT)}" for p in (ROOT / "suites").rglob("*.py")]
    wanted += [f"rigcheck/{p.relative_to(ROOT)}" for p in (ROOT / "expected").glob("*.json")]
    wanted += ["rigcheck/check.ini", "rigcheck/facts/facts.schema.json"]
    # The testing home ships whole, its simulators' profiles with it (a user tests with them).
    testing = ROOT / "rigcheck" / "testing"
    wanted += [p.relative_to(ROOT).as_posix() for p in testing.rglob("*.py")]
    wanted += [p.relative_to(ROOT).as_posix() for p in testing.rglob("*.json")]
    assert [w for w in wanted if w not in names] == []
    entry_points = zipfile.ZipFile(wheel).read(
        next(n for n in names if n.endswith("entry_points.txt"))
    )
    assert b"rigcheck = rigcheck.cli:main" in entry_points
    assert b"rigcheck-hint = rigcheck.hint" in entry_points


def toml_values(path: Path) -> dict[str, str]:
    """`key = value` lines, first of each key, quotes off (tomllib is 3.11+; rigcheck runs on
    3.10): enough for the few scalar settings read here."""
    values: dict[str, str] = {}
    for line in path.read_text().splitlines():
        key, sep, value = line.partition(" = ")
        if sep and key.strip() not in values:
            values[key.strip()] = value.split("  #")[0].strip().strip('"')
    return values


def setuptools_version() -> str:
    from importlib.metadata import version

    return version("setuptools")


def copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, dst)


def hint_plugin() -> list[str]:
    """-p rigcheck.hint, unless rigcheck is installed (tox's editable install): then pytest
    loads it from its entry point, and naming it again would register it twice."""
    from importlib.metadata import entry_points

    installed = any(ep.value == "rigcheck.hint" for ep in entry_points(group="pytest11"))
    return [] if installed else ["-p", "rigcheck.hint"]


def test_outside_a_clone_pytest_m_class_points_to_rigcheck_check(pytester):
    result = pytester.runpytest_inprocess(*hint_plugin(), "-m", "cpu")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.fnmatch_lines(["*To check this machine from any directory: rigcheck check cpu*"])


def test_the_hint_is_silent_for_other_projects(pytester):
    pytester.makepyfile("def test_x():\n    pass\n")
    result = pytester.runpytest_inprocess(*hint_plugin(), "-m", "slow")
    assert "rigcheck check" not in result.stdout.str()


def test_benchmark_json_is_a_file_for_old_pytest_benchmark_and_a_path_for_new(tmp_path):
    from rigcheck.reports.benchmark_json import BenchmarkJson

    target = BenchmarkJson(tmp_path / "benchmark.json")
    with target as fh:  # pytest-benchmark up to 5.2: `with self.json as fh`
        fh.write(b"{}")
    with open(target, "wb") as fh:  # from 5.3: `open(self.json, "wb")`
        fh.write(b"[]")
    assert (tmp_path / "benchmark.json").read_bytes() == b"[]"
    assert str(target) == str(tmp_path / "benchmark.json")


def test_a_live_run_does_not_blame_an_old_snapshot_for_a_missing_fact():
    from rigcheck.errors import FactUnavailable
    from rigcheck.facts import Facts

    for kind, words in (("live", "no probe"), ("recorded", "older rigcheck")):
        with pytest.raises(FactUnavailable, match=words):
            Facts({"origin": {"kind": kind}}).get("host.cpu.model")


def test_rigcheck_check_gives_the_verdicts_of_pytest_m_class(tmp_path):
    """From another folder, `rigcheck check` judges exactly as `pytest -m CLASS` in the clone."""
    snapshot = ROOT / "fixtures" / "snapshots" / "cpu.json"
    args = ["-m", "cpu and facts", f"--facts={snapshot}", "-p", "no:cacheprovider"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("RIGCHECK_REPORT_DIR", None)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    runs = {
        "check": ([sys.executable, "-m", "rigcheck", "check", "cpu", *args], elsewhere),
        "clone": ([sys.executable, "-m", "pytest", *args, f"--report-dir={tmp_path / 'c'}"], ROOT),
    }
    found = {}
    for name, (argv, cwd) in runs.items():
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        folder = next((elsewhere / "reports").glob("2*")) if name == "check" else tmp_path / "c"
        certificate = json.loads((folder / "certificate.json").read_text())
        found[name] = [(c["id"], c["outcome"], c["message"]) for c in certificate["checks"]]
    assert found["check"] == found["clone"] and found["check"]
