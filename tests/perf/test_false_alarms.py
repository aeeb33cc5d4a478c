"""Issue 10's false alarms in the perf suite, replayed on each class's committed snapshot and
spec: the healthy machine passes, the faulty one still fails."""

from __future__ import annotations

import os
from dataclasses import dataclass

import pytest
from junit_cases import outcomes_and_messages
from perf_inputs import measurements
from suite_replays import REPO, SUITES, SuiteRunner

PERF_SUITE = SUITES / "perf"
SNAPSHOTS = REPO / "fixtures" / "snapshots"


@dataclass
class Run:
    ret: int
    outcomes: dict[str, str]  # test name -> passed / failed / skipped
    messages: dict[str, str]  # test name -> failure or skip message
    output: str


@pytest.fixture
def class_run(pytester: pytest.Pytester, monkeypatch, tmp_path):
    """class_run(name, replay, *args) -> Run: the perf suite on the class's committed snapshot,
    judged by the committed spec (expected/), with these measurements replayed."""
    monkeypatch.delenv("RIGCHECK_EXPECTED_DIR", raising=False)
    monkeypatch.setenv("RIGCHECK_REPORT_DIR", str(tmp_path / "reports"))
    runner = SuiteRunner(pytester, "-o", "junit_family=xunit1", "-p", "no:rigcheck.plugin.reports")

    def run(name: str, replay: dict, *args: str) -> Run:
        done = runner(
            PERF_SUITE,
            f"--facts={SNAPSHOTS / f'{name}.json'}",
            "-m",
            name,
            *args,
            inputs={"--replay-measurements": replay},
        )
        return Run(done.ret, *outcomes_and_messages(done.cases), done.output)

    return run


FP16 = ("-k", "test_matmul_tflops and fp16")


@pytest.mark.parametrize(("name", "healthy", "slow"), [("m4pro", 8.0, 3.0), ("m4max", 16.0, 6.0)])
def test_a_mac_fp16_matmul_is_judged_not_failed_closed(class_run, name, healthy, slow):
    """Every Mac failed: the class measured fp16 matmul but had no fp16 floor (issue 10)."""
    test = "test_matmul_tflops[mps-fp16]"
    good = class_run(name, measurements(matmul_fp16_tflops={"mps": healthy}), *FP16)
    assert good.outcomes == {test: "passed"}, good.output
    bad = class_run(name, measurements(matmul_fp16_tflops={"mps": [slow, slow]}), *FP16)
    assert bad.outcomes == {test: "failed"}, bad.output
    assert "matmul_fp16_tflops below the floor" in bad.messages[test]


TF32 = ("-k", "test_matmul_tflops and tf32")


def test_the_perf_plugin_enables_rocm_tf32_before_torch_starts(class_run, monkeypatch):
    """MI300X timed tf32 at the fp32 rate: ROCm torch needs HIPBLASLT_ALLOW_TF32=1."""
    monkeypatch.delenv("HIPBLASLT_ALLOW_TF32", raising=False)
    test = "test_matmul_tflops[gpu0-tf32]"
    good = class_run("mi300x", measurements(matmul_tf32_tflops={0: 420.0}), *TF32)
    assert os.environ.get("HIPBLASLT_ALLOW_TF32") == "1"
    assert good.outcomes.get(test) == "passed", good.output
    # The fp32 rate (what ran before): still below the tf32 floor, still a failure.
    bad = class_run("mi300x", measurements(matmul_tf32_tflops={0: [120.0, 120.0]}), *TF32)
    assert bad.outcomes.get(test) == "failed", bad.output
