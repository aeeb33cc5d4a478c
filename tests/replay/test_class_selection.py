"""How a replayed run picks its class: named, detected, unknown, wrong, and malformed facts."""

import json
from pathlib import Path

import pytest

SNAPSHOTS = Path(__file__).resolve().parents[2] / "fixtures" / "snapshots"
CPU_CI = SNAPSHOTS / "cpu-ci.json"
H100 = SNAPSHOTS / "h100.json"


def test_a_gpu_class_on_the_cpu_machine_fails_at_identity_naming_both(replay):
    result = replay(CPU_CI, "-m", "a100")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.describe()
    identity = result.failed["test_product_matches_class"]
    assert "this machine is not a a100" in identity
    assert "expected NVIDIA A100" in identity and "(PCI 0x20B2)" in identity
    assert "found no accelerator" in identity and "CPU-only build" in identity


def test_an_unknown_class_is_a_usage_error_listing_the_known_ones(replay):
    result = replay(CPU_CI, "-m", "a1000")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.describe()
    assert "'a1000' is no device class or marker" in result.output
    assert "Known classes: a100, a100_40gb" in result.output and "h100" in result.output


def test_no_marker_detects_the_class_from_the_snapshot(replay):
    """With the reports plugin on, as a user runs it: detection, header and verdict."""
    result = replay(H100, reports=True)
    assert "rigcheck: class h100 (NVIDIA H100 SXM5 80GB (HBM3)), detected:" in result.output
    assert result.ret == pytest.ExitCode.OK, result.describe()


def test_gpus_overrides_the_expected_count(replay):
    result = replay(H100, "-m", "h100", "--gpus", "8")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.describe()
    assert set(result.failed) == {"test_device_count"}, result.describe()
    assert "expected 8 accelerator(s) for h100, found 1" in result.failed["test_device_count"]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{", "not valid JSON (line 1"),
        (json.dumps({**json.loads(H100.read_text()), "schema_version": 99}), "schema version 99"),
        (json.dumps({"schema_version": 1, "origin": {"kind": "synthetic"}}), "invalid facts"),
    ],
    ids=["bad-json", "schema-version", "missing-sections"],
)
def test_a_malformed_facts_file_is_a_usage_error_naming_it(replay, tmp_path, content, problem):
    bad = tmp_path / "machine.json"
    bad.write_text(content)
    result = replay(bad, "-m", "h100")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.describe()
    assert f"{bad}: " in result.output and problem in result.output, result.output
