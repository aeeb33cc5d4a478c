"""Every output a rigcheck command writes, named where it cannot go: a folder option given a
file or a device, a file option given a device, a path under a file, a read-only place, a
missing parent. Each is one line naming the path and what is wrong, the documented code
(docs/exit-codes.md), no traceback, nothing made in the user's folder, said before any work.

What it found (2026-11-29): `blame --report-dir /dev/full` (or a file) judged the whole job and
then said "File exists", exit 4, the suspect's code; `slurm --dir` and `k8s mark --dir` given a
file or a device said "File exists"; `fleet -o` named a temporary file (/proc/.x.g2q92wan: No
such file or directory) for a missing parent, a file parent or /proc, and offered --force to
write over /dev/full. Runs in-process (the slowest case is a job's records read once).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.hostile.test_hostile_input import assert_one_clean_line, run_cli

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = str(ROOT / "fixtures" / "snapshots" / "cpu.json")
JOB = ROOT / "tests" / "blame" / "data" / "hung_rank1_of_3"  # a real job's records

# The options that name a folder (made if missing), with the code each gives a bad one: a
# Prolog/Epilog exits 0 so that slurmd drains no node for the gate's own typo.
FOLDERS = {
    "blame --report-dir": (lambda p: ["blame", "job", "--report-dir", p], 2),
    "slurm health --dir": (lambda p: ["slurm", "health", "--dir", p, "--facts", SNAPSHOT], 2),
    "slurm prolog --dir": (lambda p: ["slurm", "prolog", "--dir", p, "--facts", SNAPSHOT], 0),
    "k8s mark --dir": (lambda p: ["k8s", "mark", "--offline", "--dir", p, "--facts", SNAPSHOT], 2),
}
FILES = {
    "fleet -o": lambda p: ["fleet", "cert.json", "-o", p],
    "history --html": lambda p: ["history", "--history", "sqlite:///h.db", "--html", p],
    "keygen": lambda p: ["keygen", p],
    "coverage --json": lambda p: ["coverage", "--class", "h100", "--json", p],
    "coverage --markdown": lambda p: ["coverage", "--class", "h100", "--markdown", p],
    "coverage --html": lambda p: ["coverage", "--class", "h100", "--html", p],
    "attest -o": lambda p: ["attest", "run", "--nonce", "n" * 16, "--key", "keys/k", "-o", p],
    "report -o": lambda p: ["report", "cert.json", "-o", p],
    "facts -o": lambda p: ["facts", "-o", p],
    "fit -o": lambda p: ["fit", "--model", "llama-2-7b", "--device", "h100", "-o", p],
}
# (path, what the line says), for a folder option and for a file option
PLACES = {
    "a file": ("a-file", "is a file, not a folder", None),
    "/dev/full": ("/dev/full", "is a device or a pipe, not a folder", "not a regular file"),
    "under a file": ("a-file/x", "a-file is a file", "a-file is a file"),
    "/proc": ("/proc/rigcheck-x/y", "cannot write in /proc", "cannot write in /proc"),
    "a read-only folder": ("read-only/x", "cannot write in", "cannot write in"),
    "a missing parent": ("no/such/x", None, "does not exist; create it first"),
}
CASES = [
    (command, place, code, said[0])
    for command, (_, code) in FOLDERS.items()
    for place, said in PLACES.items()
    if said[1]
] + [(command, place, 2, said[2]) for command in FILES for place, said in PLACES.items() if said[2]]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """A job's records, a certificate, a signed run's key: what the commands read."""
    folder = tmp_path_factory.mktemp("outputs")
    shutil.copytree(JOB, folder / "job")
    certificate = ROOT / "fixtures" / "certificates" / "h100-node-before.json"
    shutil.copy(certificate, folder / "cert.json")
    (folder / "run").mkdir()
    shutil.copy(certificate, folder / "run" / "certificate.json")
    (folder / "keys").mkdir()
    (folder / "keys" / "k").write_text("not read: the output is refused first")
    (folder / "a-file").write_text("x")
    (folder / "read-only").mkdir(mode=0o555)
    return folder


@pytest.fixture
def here(inputs, monkeypatch):
    monkeypatch.chdir(inputs)
    monkeypatch.setenv("RIGCHECK_GATE_DIR", str(inputs / "gate"))
    monkeypatch.setattr(os, "execv", lambda *a: pytest.fail(f"the campaign started: {a[1]}"))
    return inputs


@pytest.mark.parametrize(("command", "place", "code", "said"), CASES, ids=lambda v: str(v))
def test_an_output_that_cannot_go_there_is_one_line(command, place, code, said, here, capsys):
    path = PLACES[place][0]
    if place == "a read-only folder" and os.geteuid() == 0:
        pytest.skip("root writes in a read-only folder: /proc stands for a read-only place")
    make = FOLDERS[command][0] if command in FOLDERS else FILES[command]
    before = sorted(here.rglob("*"))
    got, err = run_cli(make(path), capsys)
    gate_log = here / "gate" / "gate.log"
    said_all = err + (gate_log.read_text() if gate_log.exists() else "")
    assert_one_clean_line(err, got, code)
    assert f"{path}: " in said_all and said in said_all, said_all
    assert "File exists" not in said_all and "--force" not in said_all
    assert [p for p in sorted(here.rglob("*")) if "gate" not in p.parts] == [
        p for p in before if "gate" not in p.parts
    ]  # nothing made or written (the gate's own log aside)
