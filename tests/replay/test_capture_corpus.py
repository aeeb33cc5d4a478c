"""Public nvidia-smi captures of real machines (fixtures/nvidia_smi), each read through the real
pynvml over the simulated libnvidia-ml and judged as its class: a healthy machine passes, a
faulty one fails at the check its fault belongs to, saying the cause (captures.json 'expect')."""

from __future__ import annotations

import pytest
from suite_replays import SUITES, SuiteRunner

from rigcheck.detect import detect_class
from rigcheck.facts import Facts
from rigcheck.spec import load_all, load_spec
from rigcheck.testing.nvml_sim.corpus import capture_machine, captures
from rigcheck.testing.nvml_sim.profiles import machine_driver
from rigcheck.testing.nvml_sim.snapshot import fake_sysfs, simulated_snapshot
from rigcheck.testing.synthetic import synthetic_snapshot

JUDGED = [entry for entry in captures() if entry["class"]]


def judged_snapshot(tmp_path, entry):
    machine = capture_machine(entry)
    base = synthetic_snapshot(load_spec(entry["class"]), gpus=len(machine["gpus"]))
    driver = machine_driver(machine)
    snapshot, lib = simulated_snapshot(base, machine, driver, fake_sysfs(tmp_path, machine))
    assert not lib.crashes, lib.crashes
    return torch_fit_to_driver(snapshot), len(machine["gpus"])


def torch_fit_to_driver(snapshot):
    """The capture has no torch: the synthetic one is built for CUDA 12.x, which an older
    driver cannot run. Judge the machine with a torch (and nvcc) of its driver's CUDA."""
    software = snapshot["software"]
    driver = software["nvidia_driver"]["cuda_driver_version"]
    if cuda(software["torch"]["cuda_version"]) > cuda(driver):
        software["torch"]["cuda_version"] = driver
        if software.get("nvcc"):
            software["nvcc"]["version"] = driver
    return snapshot


def cuda(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


@pytest.fixture
def judge_facts(pytester, monkeypatch):
    """The fact suites (what a capture can tell) on a snapshot: {failed check: message}."""
    monkeypatch.setenv("RIGCHECK_REPORT_DIR", str(pytester.path / "reports"))
    runner = SuiteRunner(pytester)

    def run(snapshot, *args):
        done = runner(SUITES / "facts", *args, "-p", "no:rigcheck.plugin.reports",
                      inputs={"--facts": snapshot})  # fmt: skip
        errors = {n: c.problems["error"] for n, c in done.cases.items() if "error" in c.problems}
        assert not errors, errors
        return {n: c.problems["failure"] for n, c in done.cases.items()
                if "failure" in c.problems}  # fmt: skip

    return run


@pytest.mark.parametrize("entry", JUDGED, ids=[e["file"] for e in JUDGED])
def test_each_capture_fails_only_what_the_machine_shows(judge_facts, tmp_path, entry):
    snapshot, gpus = judged_snapshot(tmp_path, entry)
    failed = judge_facts(snapshot, "-m", entry["class"], "--gpus", str(gpus))
    assert set(failed) == set(entry["expect"]), failed
    for check, cause in entry["expect"].items():
        assert cause in failed[check], (check, failed[check])


CLASSLESS = [entry for entry in captures() if not entry["class"]]
# The class each classless board is mistaken for (rigcheck/look_alikes.py NOT_A_CLASS)
NEAREST = {"thamada-H100NVLx2.txt": "h100_pcie", "thamada-gls-V100_x8.txt": "v100",
           "thamada-gls-GH200.txt": "h100", "thamada-RTX6000Ada_x8.txt": "l40",
           "thamada-gls-A10.txt": "a10g",
           "telegraf-pro-6000-maxq-blackwell-v13.xml": "rtx_pro_6000"}  # fmt: skip


@pytest.mark.parametrize("entry", CLASSLESS, ids=[e["file"] for e in CLASSLESS])
def test_a_board_with_no_class_is_refused_naming_the_class_it_resembles(tmp_path, entry):
    """Read through pynvml like the others; detection names the class a renter would try."""
    nearest = NEAREST[entry["file"]]
    snapshot, _ = judged_snapshot(tmp_path, {**entry, "class": nearest})
    found, how = detect_class(Facts(snapshot), load_all())
    assert found is None, how
    assert f"looks like class {nearest} but is not" in how, how
