"""The spec loader refuses what is wrong in meaning, not only in shape (issue 10).

Each case is one the issue found passing silently, blaming the machine, or crashing: it
must now be one SpecError line naming the file and the field, and under pytest a usage
error (exit 4) with no traceback.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rigcheck.errors import SpecError
from rigcheck.figure_names import FIGURE_UNITS
from rigcheck.measure.catalogue import CATALOGUE
from rigcheck.spec import SPEC_DIR, load_spec_file

REPO = Path(__file__).resolve().parents[2]


def raw(name: str) -> dict[str, Any]:
    return json.loads((SPEC_DIR / f"{name}.json").read_text())


def refused(tmp_path: Path, data: dict[str, Any] | str | bytes, name: str = "h100") -> str:
    path = tmp_path / f"{name}.json"
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data if isinstance(data, str) else json.dumps(data))
    with pytest.raises(SpecError) as err:
        load_spec_file(path)
    message = str(err.value)
    assert str(path) in message and "\n" not in message, message
    return message


def h100(change) -> dict[str, Any]:
    data = copy.deepcopy(raw("h100"))
    change(data)
    return data


def fig(data: dict[str, Any], key: str = "matmul_bf16_tflops") -> dict[str, Any]:
    return data["figures"][key]


CASES = {
    "floor above achievable": (
        lambda d: fig(d)["floor"].update(value=800),
        "$.figures.matmul_bf16_tflops.floor.value",
    ),
    "floor above datasheet, no achievable": (
        lambda d: fig(d, "matmul_fp32_tflops")["floor"].update(value=70),
        "$.figures.matmul_fp32_tflops.floor.value",
    ),
    "achievable above datasheet": (
        lambda d: fig(d)["achievable"].update(value=1000),
        "$.figures.matmul_bf16_tflops.achievable.value",
    ),
    "memory floor above datasheet": (
        lambda d: d["expect"]["memory_per_device"]["floor"].update(value=81),
        "$.expect.memory_per_device.floor.value",
    ),
    "misspelt figure name": (
        lambda d: d["figures"].update(matmul_bf61_tflops=d["figures"].pop("matmul_bf16_tflops")),
        "$.figures.matmul_bf61_tflops",
    ),
    "unit that does not fit the figure": (
        lambda d: fig(d).update(unit="GB/s"),
        "$.figures.matmul_bf16_tflops.unit",
    ),
    "unit that does not fit memory": (
        lambda d: d["expect"]["memory_per_device"].update(unit="GB/s"),
        "$.expect.memory_per_device.unit",
    ),
    "unit that does not fit the TDP": (
        lambda d: d["expect"]["tdp"].update(unit="MHz"),
        "$.expect.tdp.unit",
    ),
    "gpu_count 1.5": (
        lambda d: d["expect"]["gpu_count"].update(value=1.5),
        "$.expect.gpu_count.value",
    ),
    "gpu_count 0": (
        lambda d: d["expect"]["gpu_count"].update(value=0),
        "$.expect.gpu_count.value",
    ),
    "gpu_count a unit other than count": (
        lambda d: d["expect"]["gpu_count"].update(unit="W"),
        "$.expect.gpu_count.unit",
    ),
    "TDP of 0": (lambda d: d["expect"]["tdp"].update(value=0), "$.expect.tdp.value"),
    "invalid name_pattern regex": (
        lambda d: d["identity"].update(name_pattern="^NVIDIA H100 (80GB$"),
        "$.identity.name_pattern",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_meaning_errors_name_the_field(tmp_path, case):
    change, field = CASES[case]
    message = refused(tmp_path, h100(change))
    assert field in message, message


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_are_refused_by_path(tmp_path, literal):
    data = h100(lambda d: fig(d)["floor"].update(value=635))
    text = json.dumps(data).replace('"value": 635', f'"value": {literal}', 1)
    message = refused(tmp_path, text)
    assert "$.figures.matmul_bf16_tflops.floor.value" in message and "finite" in message, message


def test_tdp_infinity_is_refused(tmp_path):
    text = json.dumps(raw("h100")).replace('"value": 700', '"value": Infinity', 1)
    assert "$.expect.tdp.value" in refused(tmp_path, text)


def test_duplicate_key_is_refused(tmp_path):
    text = json.dumps(raw("h100")).replace(
        '"floor": {"value": 635', '"floor": {"value": 9999}, "floor": {"value": 635', 1
    )
    message = refused(tmp_path, text)
    assert "'floor' appears twice" in message, message


def test_a_directory_is_a_usage_error(tmp_path):
    (tmp_path / "h100.json").mkdir()
    with pytest.raises(SpecError, match="is a directory"):
        load_spec_file(tmp_path / "h100.json")


def test_utf16_file_is_refused(tmp_path):
    message = refused(tmp_path, json.dumps(raw("h100")).encode("utf-16"))
    assert "not UTF-8" in message, message


def test_binary_file_is_refused(tmp_path):
    message = refused(tmp_path, bytes(range(256)) * 4)
    assert "not UTF-8" in message or "binary" in message, message


def test_nul_bytes_are_refused(tmp_path):
    assert "binary" in refused(tmp_path, b"\x00" * 64)


def test_cpu_class_keeps_zero_gpus_and_refuses_one(tmp_path):
    assert load_spec_file(SPEC_DIR / "cpu.json").expect("gpu_count")["value"] == 0
    data = raw("cpu")
    data["expect"]["gpu_count"]["value"] = 1
    assert "$.expect.gpu_count.value" in refused(tmp_path, data, "cpu")


def test_every_measured_figure_has_its_unit_in_the_one_catalogue():
    """The perf catalogue and the spec's figure names agree, key and unit."""
    wrong = {k: e.unit for k, e in CATALOGUE.items() if FIGURE_UNITS.get(k) != e.unit}
    assert not wrong, f"perf measurements missing or with another unit in figure_names: {wrong}"


def test_every_shipped_spec_loads():
    for path in sorted(SPEC_DIR.glob("*.json")):
        if path.name != "spec.schema.json":
            load_spec_file(path)


def test_a_bad_spec_file_is_a_usage_error_under_pytest(tmp_path):
    """Exit 4 (usage error), one line naming the file, no traceback."""
    (tmp_path / "h100.json").mkdir()
    (tmp_path / "cpu.json").write_text(json.dumps(raw("cpu")))
    env = {**os.environ, "RIGCHECK_EXPECTED_DIR": str(tmp_path)}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-m", "cpu", "--co", "-q"],
        cwd=REPO / "suites",
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = run.stdout + run.stderr
    assert run.returncode == 4, out
    assert "Traceback" not in out, out
    lines = [line for line in out.splitlines() if "h100.json" in line]
    assert len(lines) == 1 and "is a directory" in lines[0], out
