"""Issue 38: two rigcheck runs on one machine, in two folders, measured each other.

Reproduced on this project's 2-core VM (2026-11-29): two `rigcheck check cpu -m perf -k "matmul
and fp32"` started 0.3 s apart in two folders both measured 0.005-0.007 TFLOP/s (one alone:
0.024) and neither said why; the per-folder run lock cannot see another folder. The machine's
measurement lock (rigcheck/measure/machine_lock.py) makes the second wait and say who holds it.
A subprocess holds the lock here: no live measurement runs.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import threading

import pytest

from rigcheck.facts import Facts
from rigcheck.measure import check, machine_lock
from rigcheck.measure.measurement import Measurement
from tests.perf.perf_inputs import cpu_facts
from tests.perf.test_cpu_isa_and_caps import CPU, perf_check

HOLD = (
    "import sys; from rigcheck.measure import machine_lock as m; m.take(print); "
    "print('held', flush=True); sys.stdin.read()"
)


@pytest.fixture
def lock_file(tmp_path, monkeypatch):
    path = tmp_path / "measure.lock"
    monkeypatch.setenv(machine_lock.ENV, str(path))
    yield path
    machine_lock.release()


def holder_process(lock_file) -> subprocess.Popen:
    """Another rigcheck that holds the machine's lock until its stdin closes."""
    child = subprocess.Popen(
        [sys.executable, "-c", HOLD, "--as-another-run"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, machine_lock.ENV: str(lock_file)},
    )
    assert child.stdout.readline().strip() == "held"
    return child


def held_by_someone(path) -> bool:
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def test_a_second_run_waits_for_the_one_measuring_and_says_who_it_is(lock_file):
    other = holder_process(lock_file)
    said: list[str] = []
    waiter = threading.Thread(target=machine_lock.take, args=(said.append,))
    waiter.start()
    waiter.join(0.3)
    assert waiter.is_alive(), "took the lock while another run held it"
    assert len(said) == 1
    assert f"pid {other.pid}" in said[0] and "--as-another-run" in said[0]
    assert f"in {os.getcwd()}" in said[0] and "wait" in said[0]
    other.stdin.close()
    other.wait(5)
    waiter.join(5)
    assert not waiter.is_alive()
    assert f"pid {os.getpid()}" in lock_file.read_text()  # the next waiter reads this run's name


def test_a_holder_killed_outright_leaves_no_stale_lock(lock_file):
    other = holder_process(lock_file)
    os.kill(other.pid, signal.SIGKILL)
    other.wait(5)
    said: list[str] = []
    machine_lock.take(said.append)
    assert said == [] and held_by_someone(lock_file)
    machine_lock.release()
    assert not held_by_someone(lock_file)


def test_a_dead_holders_name_is_not_repeated(lock_file):
    lock_file.write_text("pid 999999999 (nobody), `rigcheck check cpu` in /gone, since 00:00:00Z\n")
    fd = os.open(lock_file, os.O_RDONLY)
    try:
        assert machine_lock.holder(fd) == "a process that has not yet said which"
    finally:
        os.close(fd)


def test_the_same_process_takes_it_again_at_no_cost(lock_file):
    machine_lock.take(pytest.fail)
    machine_lock.take(pytest.fail)  # a second measurement of the same run
    assert held_by_someone(lock_file)


def test_a_lock_that_cannot_be_opened_is_said_not_hidden(tmp_path, monkeypatch):
    monkeypatch.setenv(machine_lock.ENV, str(tmp_path / "no-such-folder" / "x.lock"))
    said: list[str] = []
    machine_lock.take(said.append)
    assert len(said) == 1 and "RIGCHECK_MEASURE_LOCK" in said[0] and "unseen" in said[0]


def test_a_live_measurement_runs_under_the_machine_lock(lock_file, monkeypatch):
    """The perf checks take the lock before timing (rigcheck/measure/check.py)."""
    seen = []

    def timed(entry, device, spec, benchmark):
        seen.append(held_by_someone(lock_file))
        return Measurement("matmul_fp32_tflops", "cpu", 0.05, "TFLOP/s", "fp32")

    monkeypatch.setattr(check, "run_live", timed)
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    perf, _ = perf_check(Facts(cpu_facts()))
    perf.check("matmul_fp32_tflops", CPU)
    assert seen == [True]
