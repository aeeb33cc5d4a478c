"""Property: one random mutation of any class's spec is either refused, naming the field,
or (where the mutation keeps the spec valid) accepted. Never a silent accept of a broken
spec, never an exception other than SpecError.

CI runs ~200 examples (seeded under CI=1); RIGCHECK_SPEC_EXAMPLES=5000 runs a longer profile.
"""

from __future__ import annotations

import copy
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rigcheck.errors import SpecError
from rigcheck.figure_names import FIGURE_UNITS
from rigcheck.spec import SCHEMA_FILE, SPEC_DIR, load_spec_file

CLASSES = sorted(p.stem for p in SPEC_DIR.glob("*.json") if p.name != SCHEMA_FILE.name)
RAW = {name: json.loads((SPEC_DIR / f"{name}.json").read_text()) for name in CLASSES}
TIERS = ("floor", "achievable", "datasheet")
UNITS = ["count", "W", "GB", "GiB", "GB/s", "TFLOP/s", "tokens/s", "MHz"]
WRONG_TYPES = ["12", "N/A", None, True, [], {}, [1]]
NON_FINITE = [math.nan, math.inf, -math.inf]
BAD_REGEXES = ["(unclosed", "[z-a]", "*x", "a{2,1}", "(?P<x>a)(?P<x>b)"]
EXAMPLES = int(os.environ.get("RIGCHECK_SPEC_EXAMPLES", "200"))

VALID = None  # a mutation that keeps the spec valid: the loader must accept it


def tiered(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every tiered entry by the JSON path the loader names it with."""
    entries = {f"$.figures.{k}": v for k, v in data["figures"].items()}
    entries["$.expect.memory_per_device"] = data["expect"]["memory_per_device"]
    return entries


@st.composite
def tier_wrong_type(draw, data):
    where, entry = draw(st.sampled_from(sorted(tiered(data).items())))
    tier = draw(st.sampled_from(TIERS))
    bad = draw(st.sampled_from(WRONG_TYPES))
    if isinstance(entry.get(tier), dict) and draw(st.booleans()):
        entry[tier]["value"] = bad
        return where
    entry[tier] = bad
    if bad is not None:
        return where
    # A null tier is how a spec says "unknown": valid, except a floor with no unknown_reason
    # and the memory floor, which every machine is judged against.
    if tier != "floor":
        return VALID
    memory = where == "$.expect.memory_per_device"
    return VALID if "unknown_reason" in entry and not memory else where


@st.composite
def non_finite(draw, data):
    where, entry = draw(st.sampled_from(sorted(tiered(data).items())))
    stated = [t for t in TIERS if isinstance(entry.get(t), dict)]
    value = draw(st.sampled_from(NON_FINITE))
    if not stated:
        entry["warn_band"] = value
        return where
    entry[draw(st.sampled_from(stated))]["value"] = value
    return where


@st.composite
def tiers_out_of_order(draw, data):
    where, entry = draw(st.sampled_from(sorted(tiered(data).items())))
    stated = [t for t in TIERS if isinstance(entry.get(t), dict)]
    if len(stated) < 2:
        return draw(unknown_figure_name(data))
    low, high = sorted(draw(st.lists(st.sampled_from(stated), min_size=2, max_size=2, unique=True)),
                       key=TIERS.index)  # fmt: skip
    factor = draw(st.floats(min_value=1.001, max_value=10))
    entry[low]["value"] = entry[high]["value"] * factor
    return where


@st.composite
def unknown_figure_name(draw, data):
    old = draw(st.sampled_from(sorted(data["figures"])))
    suffix = draw(st.sampled_from(["_tflops", "_gbps", "_tokens_per_s", ""]))
    stem = draw(st.text(alphabet="abcdefghijklmnopqrstuvwxyz_0123456789", min_size=1, max_size=12))
    new = f"{stem}{suffix}"
    if new in FIGURE_UNITS or new in data["figures"]:
        new = f"{old}x"
    data["figures"][new] = data["figures"].pop(old)
    return f"$.figures.{new}"


@st.composite
def wrong_unit(draw, data):
    fields = {f"$.figures.{k}": (v, FIGURE_UNITS.get(k)) for k, v in data["figures"].items()}
    fields["$.expect.memory_per_device"] = (data["expect"]["memory_per_device"], "GiB")
    fields["$.expect.gpu_count"] = (data["expect"]["gpu_count"], "count")
    if data["expect"]["tdp"] is not None:
        fields["$.expect.tdp"] = (data["expect"]["tdp"], "W")
    where, (entry, right) = draw(st.sampled_from(sorted(fields.items())))
    entry["unit"] = draw(st.sampled_from([u for u in UNITS if u != right] + ["tflops", "", 7]))
    return where


@st.composite
def bad_regex(draw, data):
    data["identity"]["name_pattern"] = draw(st.sampled_from(BAD_REGEXES))
    return "$.identity.name_pattern"


@st.composite
def bad_count(draw, data):
    zero_ok = data["backend"] == "cpu"
    bad = draw(st.sampled_from([1.5, -1, "8", True, None, 0.5, 2 if zero_ok else 0]))
    data["expect"]["gpu_count"]["value"] = bad
    return "$.expect.gpu_count"


@st.composite
def bad_tdp(draw, data):
    if data["expect"]["tdp"] is None:
        data["expect"]["tdp"] = {"value": 300, "unit": "W", "source": "a made-up TDP"}
    data["expect"]["tdp"]["value"] = draw(st.sampled_from([0, -1, "700", None, *NON_FINITE]))
    return "$.expect.tdp"


@st.composite
def wrong_field_type(draw, data):
    section = draw(st.sampled_from(["expect", "identity", "figures"]))
    key = draw(st.sampled_from(sorted(data[section])))
    was = data[section][key]
    data[section][key] = new = draw(st.sampled_from(["yes", 3, [], True]))
    if new == [] and isinstance(was, list):
        # An empty list is a valid list; only a GPU class with no PCI id is broken.
        gpu = data["backend"] in ("cuda", "rocm")
        return f"$.{section}.{key}" if key == "pci_device_ids" and gpu else VALID
    if isinstance(was, str) and new == "yes":
        return VALID  # a name_pattern or source of "yes" is well-formed
    return f"$.{section}.{key}"


@st.composite
def still_valid(draw, data):
    """Changes that keep the meaning sound: the loader must not refuse them."""
    _where, entry = draw(st.sampled_from(sorted(tiered(data).items())))
    choice = draw(st.sampled_from(["lower floor", "source", "warn_band"]))
    if choice == "lower floor" and isinstance(entry.get("floor"), dict):
        entry["floor"]["value"] *= draw(st.floats(min_value=0.01, max_value=1.0))
    elif choice == "source" and isinstance(entry.get("datasheet"), dict):
        entry["datasheet"]["source"] = draw(st.text(min_size=3, max_size=40))
    else:
        entry["warn_band"] = draw(st.floats(min_value=0, max_value=1))
    return VALID


MUTATIONS = [
    tier_wrong_type, non_finite, tiers_out_of_order, unknown_figure_name, wrong_unit,
    bad_regex, bad_count, bad_tdp, wrong_field_type, still_valid,
]  # fmt: skip


@st.composite
def mutated_spec(draw):
    name = draw(st.sampled_from(CLASSES))
    data = copy.deepcopy(RAW[name])
    mutation = draw(st.sampled_from(MUTATIONS))
    field = draw(mutation(data))
    return name, data, mutation.__name__, field


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(mutated_spec())
def test_a_mutated_spec_is_refused_naming_the_field_or_accepted(case):
    name, data, mutation, field = case
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}.json"
        path.write_text(json.dumps(data))  # NaN/inf are written as NaN/Infinity, as a person might
        try:
            load_spec_file(path)
        except SpecError as exc:
            message = str(exc)
            assert field is not VALID, f"{mutation} kept {name} valid but it was refused: {message}"
            assert str(path) in message and "\n" not in message, message
            assert field in message, f"{mutation}: {message!r} does not name {field}"
            return
    assert field is VALID, f"{mutation} broke {field} of {name} and the loader accepted it"
