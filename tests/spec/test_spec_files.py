"""The suite tests its own specs: every expected/<class>.json is valid, consistent and sourced."""

from __future__ import annotations

import json
import keyword
import math
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from rigcheck.errors import SpecError, UnknownClassError
from rigcheck.facts import Facts
from rigcheck.measure.catalogue import CATALOGUE, half_precision
from rigcheck.measure.device import MeasuredDevice
from rigcheck.measure.train_step import flops_per_token
from rigcheck.spec import SCHEMA_FILE, SPEC_DIR, known_classes, load_spec, load_spec_file

CLASS_FILES = sorted(p for p in SPEC_DIR.glob("*.json") if p.name != SCHEMA_FILE.name)
CLASSES = [p.stem for p in CLASS_FILES]

# Every machine the foundation issue (#2) names gets a class.
FOUNDATION_CLASSES = {
    "cpu", "m4pro", "m4max", "t4", "v100", "rtx3090", "rtx4090", "l40s", "a100", "a100_40gb",
    "a100_pcie", "h100", "h100_pcie", "h200", "b200", "mi300x",
}  # fmt: skip
# The suite's own markers and pytest's built-in ones: a class named like one would be ambiguous.
SUITE_MARKERS = {"perf", "facts", "memory", "distributed", "slow"}
PYTEST_MARKERS = {"skip", "skipif", "xfail", "parametrize", "usefixtures", "filterwarnings"}
UNIT_BY_SUFFIX = {"_tflops": "TFLOP/s", "_gbps": "GB/s", "_tokens_per_s": "tokens/s"}
TIERS = ("datasheet", "achievable", "floor")
# Numbers that are rigcheck policy, not facts about hardware: they need no source.
POLICY_KEYS = {"spec_version", "warn_band", "power_limit_margin"}
# Per-direction PCIe x16 rate after encoding, GB/s: what the h2d/d2h datasheet tier must say.
PCIE_X16_GBPS = {3: 15.75, 4: 31.5, 5: 63.0}
# Floors with a policy of their own, instead of the general one (0.8 x achievable, else at most
# 0.5 x datasheet): figure key -> the derivations allowed, (tier, fraction). The floor is exactly
# fraction x tier, rounded down to 3 significant figures, from the achievable tier when there is
# one, and its source names the derivation ("0.25 x datasheet").
DERIVED_FLOORS = {
    # Flash attention forward reaches 35-73% of the tensor peak on A100/H100 (FlashAttention-2
    # and -3 papers): 0.25 x datasheet catches a broken or fallback kernel, not a tuning gap;
    # 0.1 x where a class's kernels are known to reach under a quarter of it (MI300X).
    "attention_sdpa_tflops": (("achievable", 0.8), ("datasheet", 0.25), ("datasheet", 0.1)),
    "attention_flash_attn_tflops": (("achievable", 0.8), ("datasheet", 0.25), ("datasheet", 0.1)),
    # The datasheet tier is 100% MFU: the floor is 10% MFU, where a small GPT step reaches 25-45%.
    "train_step_tokens_per_s": (("datasheet", 0.1),),
}

per_class = pytest.mark.parametrize("name", CLASSES)


@cache
def raw(name: str) -> dict[str, Any]:
    return json.loads((SPEC_DIR / f"{name}.json").read_text())


def tiered(name: str) -> dict[str, dict[str, Any]]:
    """Every entry with datasheet/achievable/floor tiers: the figures and the memory per device."""
    data = raw(name)
    return {"expect.memory_per_device": data["expect"]["memory_per_device"], **data["figures"]}


def tier(entry: dict[str, Any], which: str) -> float | None:
    return None if entry[which] is None else entry[which]["value"]


def walk(node: Any, path: str = "$"):
    """Yield (JSON path, dict) for every object in the document."""
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from walk(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from walk(value, f"{path}[{i}]")


def round_down_3_significant(x: float) -> float:
    step = 10 ** (math.floor(math.log10(x)) - 2)
    return math.floor(x / step + 1e-9) * step


def round_3_significant(x: float) -> float:
    step = 10 ** (math.floor(math.log10(x)) - 2)
    return round(x / step) * step


def test_spec_files_exist():
    assert CLASSES, f"no spec files in {SPEC_DIR}"


@per_class
def test_spec_file_validates(name):
    spec = load_spec_file(SPEC_DIR / f"{name}.json")
    assert spec.name == name


@per_class
def test_file_name_is_the_class(name):
    assert raw(name)["class"] == name, (
        f"expected/{name}.json declares $.class {raw(name)['class']!r}: the marker comes from the "
        "file name, so they must agree"
    )


@per_class
def test_tiers_are_ordered(name):
    """floor < achievable <= datasheet wherever present (floor < datasheet when nothing between)."""
    wrong = []
    for key, entry in tiered(name).items():
        ds, ach, floor = (tier(entry, t) for t in TIERS)
        numbers = f"floor={floor}, achievable={ach}, datasheet={ds} {entry['unit']}"
        if floor is not None and ach is not None and not floor < ach:
            wrong.append(f"{key}: floor must be below achievable ({numbers})")
        if ach is not None and ds is not None and not ach <= ds:
            wrong.append(f"{key}: achievable must not exceed the datasheet ({numbers})")
        if floor is not None and ds is not None and not floor < ds:
            wrong.append(f"{key}: floor must be below the datasheet ({numbers})")
    assert not wrong, f"{name}: " + "; ".join(wrong)


@per_class
def test_floors_follow_the_policy(name):
    """Floor = 0.8 x achievable (3 s.f., rounded down); with no achievable, <= 0.5 x datasheet;
    DERIVED_FLOORS' figures follow their own derivation. Every floor's source names its policy."""
    wrong = []
    for key, entry in tiered(name).items():
        if key == "expect.memory_per_device":
            continue  # a fact: its floor is the healthy NVML total less 1%, not a throughput margin
        if entry["floor"] is None:
            continue
        if "floor policy" not in entry["floor"]["source"]:
            wrong.append(f"{key}: the floor's source does not state the floor policy")
        check = derived_floor_problem if key in DERIVED_FLOORS else general_floor_problem
        wrong += check(key, entry)
    assert not wrong, f"{name}: " + "; ".join(wrong)


def general_floor_problem(key: str, entry: dict[str, Any]) -> list[str]:
    ds, ach, floor = (tier(entry, t) for t in TIERS)
    if ach is not None:
        if not math.isclose(floor, round_down_3_significant(0.8 * ach)):
            return [f"{key}: floor {floor} != 0.8 x achievable {ach} rounded down"]
        policy = "0.8 x achievable"
    elif ds is not None:
        if floor > 0.5 * ds:
            return [f"{key}: floor {floor} > 0.5 x datasheet {ds} with no achievable figure"]
        policy = "0.5 x datasheet"
    elif "host-dependent" in entry.get("unknown_reason", ""):
        # A host-dependent figure (the cpu class) has no tier to derive from: its floor is an
        # explicit sanity bound, and its unknown_reason says so.
        policy = "host-dependent"
    else:
        return [f"{key}: floor {floor} has no achievable or datasheet to derive from"]
    if policy not in entry["floor"]["source"]:
        return [f"{key}: the floor's source does not name its policy ({policy!r})"]
    return []


def derived_floor_problem(key: str, entry: dict[str, Any]) -> list[str]:
    basis = "achievable" if entry["achievable"] is not None else "datasheet"
    allowed = [(t, f) for t, f in DERIVED_FLOORS[key] if t == basis and entry[t] is not None]
    floor, source = tier(entry, "floor"), entry["floor"]["source"]
    for t, fraction in allowed:
        policy = f"{fraction:g} x {t}"
        if math.isclose(floor, round_down_3_significant(fraction * tier(entry, t))):
            return [] if policy in source else [f"{key}: the floor's source does not name {policy}"]
    options = " or ".join(f"{f:g} x {t} ({tier(entry, t)})" for t, f in allowed)
    return [f"{key}: floor {floor} is not {options or f'derived from the {basis}'}, rounded down"]


@per_class
def test_units_match_the_key(name):
    data = raw(name)
    wrong = []
    for key, entry in data["figures"].items():
        suffix = next((s for s in UNIT_BY_SUFFIX if key.endswith(s)), None)
        if suffix is None:
            wrong.append(f"figures.{key}: name ends in no unit ({', '.join(UNIT_BY_SUFFIX)})")
        elif entry["unit"] != UNIT_BY_SUFFIX[suffix]:
            wrong.append(f"figures.{key}: unit {entry['unit']!r}, not {UNIT_BY_SUFFIX[suffix]!r}")
    expect = data["expect"]
    memory_unit = expect["memory_per_device"]["unit"]
    if memory_unit != "GiB":
        wrong.append(f"expect.memory_per_device: unit {memory_unit!r}, not GiB")
    if expect["gpu_count"]["unit"] != "count":
        wrong.append(f"expect.gpu_count: unit {expect['gpu_count']['unit']!r}, not count")
    if expect["tdp"] is not None and expect["tdp"]["unit"] != "W":
        wrong.append(f"expect.tdp: unit {expect['tdp']['unit']!r}, not W")
    assert not wrong, f"{name}: " + "; ".join(wrong)


@per_class
def test_every_number_has_a_source(name):
    unsourced = []
    for path, node in walk(raw(name)):
        numbers = [
            k
            for k, v in node.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and k not in POLICY_KEYS
        ]
        if ("value" in node or numbers) and not str(node.get("source", "")).strip():
            unsourced.append(path)
    assert not unsourced, f"{name}: values without a source at {', '.join(unsourced)}"


@per_class
def test_unknown_tiers_say_why(name):
    """A null tier needs an unknown_reason; a null floor makes the check fail closed."""
    silent = [
        f"{key} ({', '.join(t for t in TIERS if entry[t] is None)} null)"
        for key, entry in tiered(name).items()
        if any(entry[t] is None for t in TIERS) and not entry.get("unknown_reason", "").strip()
    ]
    assert not silent, f"{name}: null tiers without an unknown_reason: {'; '.join(silent)}"


@per_class
def test_figures_agree_with_the_facts(name):
    """fp8 figure only where the class has fp8; host-copy datasheet = the class's PCIe x16 rate."""
    data = raw(name)
    expect, figures = data["expect"], data["figures"]
    wrong = []
    has_fp8 = bool(expect["fp8"] and expect["fp8"]["value"])
    if has_fp8 != ("matmul_fp8_tflops" in figures):
        state = "absent" if has_fp8 else "present"
        wrong.append(f"expect.fp8 is {has_fp8} but figures.matmul_fp8_tflops is {state}")
    for key in ("h2d_pinned_gbps", "d2h_pinned_gbps"):
        if key not in figures:
            continue
        if expect["pcie"] is None:
            wrong.append(f"{key} present but the class has no PCIe link")
            continue
        want = PCIE_X16_GBPS[expect["pcie"]["generation"]] * expect["pcie"]["width"] / 16
        if tier(figures[key], "datasheet") != want:
            wrong.append(f"{key}: datasheet {tier(figures[key], 'datasheet')} != PCIe rate {want}")
    assert not wrong, f"{name}: " + "; ".join(wrong)


@per_class
def test_derived_datasheets_follow_their_basis(name):
    """Datasheet tiers computed from another figure of the class move with it: the triad's is the
    memory bandwidth, attention's the half-precision tensor peak, the train step's 100% MFU."""
    figures = raw(name)["figures"]
    half = half_precision(load_spec_file(SPEC_DIR / f"{name}.json"))

    def datasheet(key: str) -> float | None:
        return tier(figures[key], "datasheet") if key in figures else None

    peak = datasheet(f"matmul_{half}_tflops")
    want = {
        "device_triad_gbps": datasheet("device_copy_gbps"),
        "attention_sdpa_tflops": peak,
        "attention_flash_attn_tflops": peak,
        "train_step_tokens_per_s": peak and round_3_significant(peak * 1e12 / flops_per_token()),
    }
    wrong = [
        f"{key}: datasheet {datasheet(key)}, but its basis gives {value}"
        for key, value in want.items()
        if key in figures and not same(datasheet(key), value)
    ]
    assert not wrong, f"{name} ({half}): " + "; ".join(wrong)


def same(a: float | None, b: float | None) -> bool:
    return a is b if a is None or b is None else math.isclose(a, b)


@per_class
def test_every_measured_figure_is_in_the_spec(name):
    """What the perf suite measures on a healthy machine of the class has a figure (a missing
    one fails closed), and no figure is there that the suite never measures on the class."""
    spec = load_spec_file(SPEC_DIR / f"{name}.json")
    cc = spec.expected_value("compute_capability")
    device = MeasuredDevice("0", name, spec.backend, index=0, fact={"compute_capability": cc})

    def measured(key: str, flash_attn_installed: bool) -> bool:
        facts = Facts({"software": {"flash_attn": {"installed": flash_attn_installed}}})
        return CATALOGUE[key].not_applicable(spec, facts, device) is None

    expected_flash_attn = bool(spec.expected_value("flash_attn"))
    missing = [k for k in CATALOGUE if measured(k, expected_flash_attn) and k not in spec.figures]
    never = [k for k in CATALOGUE if k in spec.figures and not measured(k, True)]
    assert not missing, f"{name}: measured but no figure, so the check fails closed: {missing}"
    assert not never, f"{name}: figures the perf suite never measures on this class: {never}"


def test_pci_ids_identify_one_class():
    """Detection maps a PCI device id to a class, so no id may belong to two."""
    owners = defaultdict(list)
    for name in CLASSES:
        for pci_id in raw(name)["identity"]["pci_device_ids"]:
            owners[pci_id].append(name)
    shared = {pci_id: names for pci_id, names in owners.items() if len(names) > 1}
    assert not shared, f"PCI device ids claimed by more than one class: {shared}"


def test_every_foundation_class_has_a_spec():
    missing = FOUNDATION_CLASSES - set(CLASSES)
    assert not missing, f"classes the foundation issue names have no spec file: {sorted(missing)}"


@per_class
def test_class_is_a_usable_marker(name):
    assert name.isidentifier() and not keyword.iskeyword(name), f"{name!r} is not a marker name"
    assert name not in {"and", "or", "not"}, f"{name!r} would read as a -m operator"
    clash = {name} & (SUITE_MARKERS | PYTEST_MARKERS)
    assert not clash, f"class {name!r} collides with the marker {clash.pop()!r}"


# ---- the error path: a broken spec stops the run with file, JSON path and problem ----


def write_spec(directory: Path, name: str, data: dict[str, Any] | str) -> Path:
    path = directory / f"{name}.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_malformed_json_names_file_and_position(tmp_path):
    path = write_spec(tmp_path, "t4", '{"class": "t4",\n  "spec_version": }')
    with pytest.raises(SpecError) as err:
        load_spec_file(path)
    message = str(err.value)
    assert str(path) in message and "not valid JSON" in message and "line 2" in message, message


@pytest.mark.parametrize(
    ("section", "key", "bad", "json_path"),
    [
        ("pcie", "width", -16, "$.expect.pcie.width"),
        ("gpu_count", "value", -1, "$.expect.gpu_count.value"),
        ("tdp", "value", -400, "$.expect.tdp.value"),
    ],
)
def test_schema_violation_names_file_and_json_path(tmp_path, section, key, bad, json_path):
    data = json.loads(json.dumps(raw("a100")))
    data["expect"][section][key] = bad
    path = write_spec(tmp_path, "a100", data)
    with pytest.raises(SpecError) as err:
        load_spec_file(path)
    message = str(err.value)
    assert str(path) in message and json_path in message and str(bad) in message, message


def test_negative_floor_is_rejected(tmp_path):
    data = json.loads(json.dumps(raw("a100")))
    data["figures"]["device_copy_gbps"]["floor"]["value"] = -5
    path = write_spec(tmp_path, "a100", data)
    with pytest.raises(SpecError, match=r"\$\.figures\.device_copy_gbps\.floor\.value"):
        load_spec_file(path)


def test_class_must_match_file_name(tmp_path):
    path = write_spec(tmp_path, "a100_copy", raw("a100"))
    with pytest.raises(SpecError, match=r"\$\.class is 'a100'.*a100_copy\.json"):
        load_spec_file(path)


def test_broken_file_in_spec_dir_stops_load_spec(tmp_path, monkeypatch):
    monkeypatch.setenv("RIGCHECK_EXPECTED_DIR", str(tmp_path))
    write_spec(tmp_path, "cpu", raw("cpu"))
    path = write_spec(tmp_path, "t4", "{ not json")
    assert load_spec("cpu").name == "cpu"
    with pytest.raises(SpecError, match=str(path)):
        load_spec("t4")


def test_unknown_class_lists_the_known_ones():
    with pytest.raises(UnknownClassError) as err:
        load_spec("a1000")
    message = str(err.value)
    assert "a1000" in message
    missing = [name for name in known_classes() if name not in message]
    assert not missing, f"known classes not listed: {missing}: {message}"


def test_unknown_class_in_private_spec_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("RIGCHECK_EXPECTED_DIR", str(tmp_path))
    write_spec(tmp_path, "cpu", raw("cpu"))
    with pytest.raises(UnknownClassError, match=r"Known classes: cpu$"):
        load_spec("h100")
