"""The variant applier, and the variants file: well formed, applicable, naming real checks."""

import ast
from pathlib import Path

import pytest

from rigcheck.spec import load_all
from rigcheck.testing.variants import VariantError, apply_changes, load_variants, matches

SUITES = Path(__file__).resolve().parents[2] / "suites"
SPECS = load_all()
VARIANTS = load_variants()
SNAPSHOT = {
    "devices": [
        {"ecc": {"current": True}, "power": {"limit_w": 700.0}},
        {"ecc": {"current": True}},
    ],
    "software": {"nvcc": {"version": "12.4"}},
}


def test_set_every_device_or_one():
    every = apply_changes(SNAPSHOT, [{"set": "devices.*.ecc.current", "to": False}])
    assert [d["ecc"]["current"] for d in every["devices"]] == [False, False]
    one = apply_changes(SNAPSHOT, [{"set": "devices.1.ecc", "to": {"error": "NVMLError"}}])
    assert one["devices"][0]["ecc"] == {"current": True}
    assert one["devices"][1]["ecc"] == {"error": "NVMLError"}


def test_scale_add_and_remove():
    changes = [
        {"scale": "devices.0.power.limit_w", "by": 0.6},
        {"add": "devices.0.power.limit_w", "by": 1},
        {"remove": "devices.1"},
        {"remove": "software.nvcc"},
    ]
    broken = apply_changes(SNAPSHOT, changes)
    assert broken["devices"] == [{"ecc": {"current": True}, "power": {"limit_w": 421.0}}]
    assert broken["software"] == {}


def test_the_good_snapshot_is_left_as_it_was():
    before = repr(SNAPSHOT)
    apply_changes(
        SNAPSHOT, [{"set": "devices.*.ecc.current", "to": False}, {"remove": "devices.0"}]
    )
    assert repr(SNAPSHOT) == before


@pytest.mark.parametrize(
    "change",
    [
        {"set": "devices.0.ecc.curent", "to": False},  # a typo never adds a key
        {"set": "devices.2.ecc", "to": None},
        {"remove": "software.nvcc.path"},
        {"set": "software.nvcc.version"},
        {"rename": "software.nvcc"},
    ],
)
def test_an_edit_the_snapshot_cannot_take_is_an_error(change):
    with pytest.raises(VariantError):
        apply_changes(SNAPSHOT, [change])


def test_conditions():
    h100, t4, cpu = SPECS["h100"], SPECS["t4"], SPECS["cpu"]
    assert matches({}, cpu)
    assert matches({"backends": ["cuda"], "vendors": ["nvidia"]}, h100)
    assert not matches({"classes": ["a100"]}, h100)
    assert matches({"spec": {"expect.compute_capability.value": {"min": "8.0"}}}, h100)
    assert matches({"spec": {"expect.compute_capability.value": {"below": "8.0"}}}, t4)
    assert not matches({"spec": {"expect.compute_capability.value": {"min": "8.0"}}}, cpu)
    assert matches({"spec": {"expect.flash_attn.value": {"not": True}}}, cpu)
    with pytest.raises(VariantError):
        matches({"backend": ["cuda"]}, h100)


def test_variants_have_unique_names_and_apply_somewhere():
    names = [v.name for v in VARIANTS]
    assert len(names) == len(set(names))
    idle = [v.name for v in VARIANTS if not any(v.applies(s) for s in SPECS.values())]
    assert not idle, f"variants that apply to no class in expected/: {idle}"


def suite_checks() -> set[str]:
    return {
        node.name
        for path in SUITES.rglob("test_*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    }


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_every_expected_failure_names_a_real_check(variant):
    checks = suite_checks()
    for spec in SPECS.values():
        if variant.applies(spec):
            failures = variant.failures(spec)
            assert failures, f"{variant.name} expects nothing to fail on {spec.name}"
            for failure in failures:
                assert failure.test.split("[")[0] in checks, failure.test
                assert failure.message, failure.test
