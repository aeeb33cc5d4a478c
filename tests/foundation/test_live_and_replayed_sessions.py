"""The plugin as a user meets it: real pytest runs of the real suites, live and replayed.

A real subprocess where the process is what is shown (the live run; the recorded facts replayed;
a usage error's exit code and stderr); the other runs of the same suites in this process
(tests/suite_replays.py): the same options, output and exit code, without a second or so of
pytest and plugin start each (seven runs, over a minute of the parallel pass on the loaded
machine)."""

import json
import warnings
from pathlib import Path

import pytest
from live_allreduce import only_the_floor_failed
from suite_replays import SuiteRunner

from rigcheck.reports.certificate import load_certificate

REPO = Path(__file__).resolve().parents[2]
SUITES = str(REPO / "suites")


def run_suites(pytester, *args):
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args, SUITES)


@pytest.fixture
def run_in_process(pytester):
    """run_in_process(*args) -> RunResult: the suites run as run_suites runs them, here."""
    runner = SuiteRunner(pytester)
    return lambda *args: runner(Path(SUITES), *args).result


def test_cpu_class_passes_live_on_this_machine(live_cpu_run):
    # `pytest -m cpu` on the suites, live (tests/conftest.py; the gloo test judges its job too).
    pytest.LineMatcher(live_cpu_run.output.splitlines()).fnmatch_lines(
        ["rigcheck: facts from this machine (live)*"]
    )
    # Every check passes but the live all-reduce, which may be judged under the cpu floor on
    # CI's busy cores (tests/live_allreduce.py): then it alone fails, saying so, and is warned.
    under = only_the_floor_failed(load_certificate(live_cpu_run.report))
    if under:
        warnings.warn(under, stacklevel=1)
    assert live_cpu_run.ret == (1 if under else 0), live_cpu_run.output


def test_recorded_facts_replay_to_the_same_verdict(pytester, cpu_snapshot):
    assert json.loads(cpu_snapshot.read_text())["origin"]["kind"] == "recorded"
    result = run_suites(pytester, "-m", "cpu", f"--facts={cpu_snapshot}")
    result.stdout.fnmatch_lines([f"rigcheck: facts from {cpu_snapshot} [[]recorded]*"])
    assert result.ret == 0, result.stdout.str()


def test_no_marker_detects_the_class_and_says_so(run_in_process, cpu_snapshot):
    result = run_in_process(f"--facts={cpu_snapshot}")
    result.stdout.fnmatch_lines(["rigcheck: class cpu (*), detected: no accelerator found*"])
    assert result.ret == 0


def test_a_gpu_class_on_this_machine_fails_at_identity_naming_both(run_in_process, cpu_snapshot):
    result = run_in_process("-m", "h100", f"--facts={cpu_snapshot}", "-rf")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "E * this machine is not a h100:",
            "E * expected NVIDIA H100 SXM5 80GB (HBM3) (PCI 0x2330), found no accelerator*",
            "FAILED *test_identity.py::test_product_matches_class*",
        ]
    )


def test_an_unknown_class_is_a_usage_error_listing_the_known_ones(pytester):
    result = run_suites(pytester, "-m", "a1000")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*'a1000' is no device class or marker. Known classes: *cpu*"])


def test_two_classes_at_once_is_a_usage_error(run_in_process):
    result = run_in_process("-m", "cpu or h100")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*names several classes (cpu, h100)*"])


def test_a_broken_facts_file_is_a_usage_error_naming_it(run_in_process, tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text("{")
    result = run_in_process("-m", "cpu", f"--facts={bad}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{bad}: not valid JSON*"])


def test_a_malformed_spec_file_stops_the_run_naming_file_and_path(
    run_in_process, tmp_path, monkeypatch
):
    specs = tmp_path / "expected"
    specs.mkdir()
    good = json.loads((REPO / "expected" / "h100.json").read_text())
    good["expect"]["pcie"]["width"] = 12
    (specs / "h100.json").write_text(json.dumps(good))
    monkeypatch.setenv("RIGCHECK_EXPECTED_DIR", str(specs))
    result = run_in_process("-m", "h100")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*h100.json: invalid spec at $.expect.pcie.width: 12 is not one of*"]
    )


def test_gpus_overrides_the_expected_count(run_in_process, cpu_snapshot):
    result = run_in_process("-m", "cpu", f"--facts={cpu_snapshot}", "--gpus", "2", "-rf")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        ["E * expected 2 accelerator(s) for cpu, found 0: none*", "FAILED *::test_device_count*"]
    )


def test_an_older_minor_driver_cuda_passes_with_a_warning(run_in_process, tmp_path):
    """CUDA minor-version compatibility: torch cu12.8 runs on a 12.2 driver, without PTX JIT."""
    from rigcheck.spec import load_spec
    from rigcheck.testing.synthetic import synthetic_snapshot

    facts = synthetic_snapshot(load_spec("h100"))
    facts["software"]["torch"]["cuda_version"] = "12.8"
    facts["software"]["nvidia_driver"].update(version="535.104.05", cuda_driver_version="12.2")
    path = tmp_path / "h100-old-minor.json"
    path.write_text(json.dumps(facts))
    result = run_in_process("-m", "h100 and facts", f"--facts={path}", "-k", "driver")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*DriverOlderThanTorchCuda: the driver supports CUDA up to 12.2*"])
