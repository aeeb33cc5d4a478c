"""Issue 24: a report folder that cannot take the reports (a file, /proc, a full disk) ends the
run in one line naming the path and what is wrong, with exit code 6, never INTERNALERROR or
exit 1, and leaves no half-written file behind.
"""

from __future__ import annotations

import errno
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from rigcheck import paths
from rigcheck.reports import certificate as cert
from rigcheck.reports import live_certificate
from rigcheck.reports.unwritable import (
    REPORT_NOT_WRITTEN,
    ReportWriteError,
    from_os_error,
    remove_if_unreadable,
    root_problem,
)

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = ROOT / "fixtures" / "snapshots" / "cpu.json"
FACT_RUN = (str(ROOT / "suites" / "facts"), "-p", "rigcheck.plugin", "-m", "cpu")


def run_facts(pytester, monkeypatch, reports: Path | str):
    monkeypatch.setenv("RIGCHECK_REPORT_DIR", str(reports))
    return pytester.runpytest_inprocess(*FACT_RUN, f"--facts={SNAPSHOT}", "-q")


def ending(result) -> list[str]:
    text = result.outlines + result.errlines
    assert not any("INTERNALERROR" in line or "Traceback" in line for line in text), text
    return [line for line in text if "the reports cannot be written" in line]


# -- the folder that holds the runs ------------------------------------------------------------


@pytest.mark.parametrize(
    "where, why",
    [
        ("/dev/null", "/dev/null: is a file, not a folder"),
        ("/proc/rigcheck-test", "/proc is not writable"),
        ("a-file/reports", "a-file is a file, so the folder cannot be made"),
    ],
)
def test_an_unwritable_report_folder_is_one_line_and_exit_6(where, why, pytester, monkeypatch):
    (pytester.path / "a-file").write_text("x")
    result = run_facts(pytester, monkeypatch, where)
    assert result.ret == REPORT_NOT_WRITTEN
    [line] = ending(result)
    assert why in line and "RIGCHECK_REPORT_DIR" in line
    assert result.parseoutcomes().get("passed", 0) == 0  # nothing was judged unreported


def test_root_problem_names_the_folder(tmp_path):
    (tmp_path / "f").write_text("x")
    assert root_problem(tmp_path / "reports") is None
    assert root_problem(tmp_path / "f").reason == "is a file, not a folder"
    assert "is a file, so" in root_problem(tmp_path / "f" / "sub" / "reports").reason
    assert "not writable" in root_problem(Path("/proc/rigcheck-test")).reason


# -- a disk that fills up mid-run: ENOSPC injected at the write seam ----------------------------


class FillingDisk:
    """tempfile, as rigcheck.paths.write_atomic uses it, and the live certificate's writes
    (rigcheck.reports.live_certificate), on a disk that is full after `room` writes: later ones
    fail as a full disk does, after the file was created."""

    def __init__(self, room: int):
        self.room = room

    def NamedTemporaryFile(self, *args, **kwargs):  # tempfile's own name
        handle = tempfile.NamedTemporaryFile(*args, **kwargs)  # noqa: SIM115 - the caller's
        self.room -= 1
        if self.room < 0:
            handle.write = _no_space
        return handle

    def put(self, copy: live_certificate._Copy, at: int, data: bytes) -> None:
        self.room -= 1
        if self.room < 0:
            _no_space()
        PUT(copy, at, data)


PUT = live_certificate._Copy.put


def fill(monkeypatch, room: int) -> None:
    disk = FillingDisk(room)
    monkeypatch.setattr(paths, "tempfile", disk)  # write_atomic's home
    monkeypatch.setattr(live_certificate._Copy, "put", lambda *args: disk.put(*args))


def _no_space(*args):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize("room", [0, 3])  # the first certificate, or one mid-run
def test_a_full_disk_is_one_line_exit_6_and_no_temp_file(room, pytester, monkeypatch):
    fill(monkeypatch, room)
    reports = pytester.path / "reports"
    result = run_facts(pytester, monkeypatch, reports)
    assert result.ret == REPORT_NOT_WRITTEN
    [line] = ending(result)
    assert "certificate.json: No space left on device. Free space there" in line
    assert not list(reports.rglob(".certificate.json.*"))
    assert not list(reports.rglob("junit.xml"))  # not written once the disk is known full
    passed = result.parseoutcomes().get("passed", 0)
    assert passed == 0 if room == 0 else 0 < passed < 11  # the run stops when it knows


def test_write_atomic_leaves_nothing_when_the_write_fails(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "tempfile", FillingDisk(0))
    with pytest.raises(OSError, match="No space left"):
        cert.write_atomic(tmp_path / "certificate.json", "{}" * 10000)
    assert list(tmp_path.iterdir()) == []


def test_a_full_disk_says_free_space_and_a_folder_says_elsewhere():
    full = from_os_error(OSError(errno.ENOSPC, "No space left on device"), Path("/r/x"))
    assert full.full and full.path == "/r/x"
    assert "Free space there, or name a folder" in full.line()
    denied = from_os_error(PermissionError(errno.EACCES, "Permission denied", "/r"), Path("/x"))
    assert not denied.full and denied.path == "/r"
    assert denied.line().endswith(". Name a folder that can take them: --report-dir DIR, or "
                                  "RIGCHECK_REPORT_DIR=DIR")  # fmt: skip
    assert str(ReportWriteError("/a", "why")) == "/a: why"


def test_a_cut_junit_file_is_removed_a_whole_one_kept(tmp_path):
    cut, whole = tmp_path / "cut.xml", tmp_path / "whole.xml"
    cut.write_text("<testsuites><testsuite>")
    whole.write_text("<testsuites/>")
    remove_if_unreadable(cut)
    remove_if_unreadable(whole)
    remove_if_unreadable(tmp_path / "missing.xml")
    assert not cut.exists() and whole.exists()


# -- a real full disk: a 60 KiB tmpfs (root with mount rights only) -----------------------------


@pytest.fixture
def small_tmpfs(tmp_path):
    where = tmp_path / "disk"
    where.mkdir()
    mount = ["mount", "-t", "tmpfs", "-o", "size=60k", "tmpfs", str(where)]
    if os.geteuid() != 0 or subprocess.run(mount, capture_output=True).returncode != 0:
        pytest.skip("mounting a small tmpfs needs root with mount rights; ENOSPC is injected above")
    yield where
    subprocess.run(["umount", str(where)], check=True)


def test_a_really_full_disk(small_tmpfs, pytester, monkeypatch):
    result = run_facts(pytester, monkeypatch, small_tmpfs)
    assert result.ret == REPORT_NOT_WRITTEN
    [line] = ending(result)
    assert "No space left on device" in line
    assert not list(small_tmpfs.rglob(".*.json.*"))


@pytest.fixture
def read_only_folder(tmp_path):
    where = tmp_path / "ro"
    where.mkdir()
    mount = ["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(where)]
    if os.geteuid() != 0 or subprocess.run(mount, capture_output=True).returncode != 0:
        pytest.skip("mounting a read-only tmpfs needs root with mount rights; /proc is used above")
    yield where
    subprocess.run(["umount", str(where)], check=True)


def test_a_read_only_working_folder(read_only_folder, pytester, monkeypatch):
    """Root writes anywhere a mode allows, but not on a read-only file system."""
    result = run_facts(pytester, monkeypatch, read_only_folder / "reports")
    assert result.ret == REPORT_NOT_WRITTEN
    [line] = ending(result)
    assert f"{read_only_folder}/reports: {read_only_folder} is not writable" in line
