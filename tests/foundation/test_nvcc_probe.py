"""nvcc is read through the runner seam: version parsed, absence and hangs told apart."""

import subprocess

from rigcheck.facts.nvidia import nvcc as software


class FakeRunner:
    timeout_s = 20

    def __init__(self, stdout="", returncode=0, hang=False, oserror=None):
        self.stdout, self.returncode, self.hang, self.oserror = stdout, returncode, hang, oserror

    def __call__(self, argv):
        if self.hang:
            raise subprocess.TimeoutExpired(argv, self.timeout_s)
        if self.oserror:
            raise self.oserror
        return subprocess.CompletedProcess(argv, self.returncode, self.stdout, "")


NVCC_OUTPUT = """nvcc: NVIDIA (R) Cuda compiler driver
Cuda compilation tools, release 12.4, V12.4.131
Build cuda_12.4.r12.4/compiler.34097967_0
"""


def test_release_is_parsed(monkeypatch):
    monkeypatch.setattr(software.shutil, "which", lambda *a, **k: "/usr/local/cuda/bin/nvcc")
    assert software.probe_nvcc(FakeRunner(NVCC_OUTPUT)) == {
        "path": "/usr/local/cuda/bin/nvcc",
        "version": "12.4",
    }


def test_no_nvcc_is_none_not_an_error(monkeypatch):
    monkeypatch.setattr(software.shutil, "which", lambda *a, **k: None)
    monkeypatch.setattr(software, "_cuda_home_nvcc", lambda: None)
    assert software.probe_nvcc(FakeRunner()) is None


def test_a_hanging_nvcc_is_an_error_record(monkeypatch):
    monkeypatch.setattr(software.shutil, "which", lambda *a, **k: "/opt/nvcc")
    assert "did not answer" in software.probe_nvcc(FakeRunner(hang=True))["error"]


def test_garbage_output_is_an_error_record(monkeypatch):
    monkeypatch.setattr(software.shutil, "which", lambda *a, **k: "/opt/nvcc")
    assert "gave no release" in software.probe_nvcc(FakeRunner("segfault"))["error"]


def test_an_nvcc_that_cannot_run_is_an_error_record(monkeypatch):
    monkeypatch.setattr(software.shutil, "which", lambda *a, **k: "/opt/nvcc")
    broken = FakeRunner(oserror=OSError(8, "Exec format error"))
    assert "could not run: [Errno 8] Exec format error" in software.probe_nvcc(broken)["error"]
