"""Detection's and the spec loader's decisions at their edges, each with its message.

Written against the survivors of `python tools/mutation.py spec-detect` (tests/mutation/
survivors.md): why no accelerator was found, in the driver's and torch's own words; a class
known by name (Apple) rather than PCI id; a device whose PCI facts are missing; the list of
keys in a duplicate-key refusal, cut at six.
"""

from __future__ import annotations

import json

import pytest

from rigcheck.detect import (
    describe_device,
    detect_class,
    expected_gpu_count,
    identity_problems,
    matches_spec,
    no_device_reason,
)
from rigcheck.errors import SpecError, UnknownClassError
from rigcheck.facts import Facts
from rigcheck.figure_names import FIGURE_UNITS
from rigcheck.spec import SPEC_DIR, _one_line, known_classes, load_all, load_spec, load_spec_file


def host(software: dict, devices: list | None = None) -> Facts:
    return Facts({"devices": devices or [], "software": software, "origin": {"kind": "synthetic"}})


def test_a_driver_marked_absent_without_a_reason_says_no_nvidia_driver():
    assert no_device_reason(host({"nvidia_driver": {"present": False}})) == "no NVIDIA driver"


def test_a_driver_entry_with_a_reason_gives_that_reason_even_if_not_marked_absent():
    facts = host({"nvidia_driver": {"reason": "nvidia.ko not loaded"}})
    assert no_device_reason(facts) == "nvidia.ko not loaded"


def test_a_present_driver_with_no_reason_gives_none():
    assert no_device_reason(host({"nvidia_driver": {"present": True}})) == "none reported"


def test_torch_that_failed_to_import_is_quoted():
    facts = host({"nvidia_driver": {"present": False, "reason": "no /dev/nvidia0"},
                  "torch": {"error": "ImportError: libcudart.so.12"}})  # fmt: skip
    assert no_device_reason(facts) == "no /dev/nvidia0; torch: ImportError: libcudart.so.12"


def test_nothing_known_about_driver_or_torch_is_none_reported():
    assert no_device_reason(host({})) == "none reported"
    name, how = detect_class(host({}), load_all())
    assert (name, how) == ("cpu", "no accelerator found (none reported)")


def test_a_device_without_pci_facts_is_not_of_a_pci_class():
    device = {"index": 0, "vendor": "nvidia", "name": "NVIDIA H100 80GB HBM3", "pci": None}
    assert matches_spec(device, load_spec("h100")) is False
    (problem,) = identity_problems(host({}, [device]), load_spec("h100"))
    assert problem == (
        "GPU 0: expected NVIDIA H100 SXM5 80GB (HBM3) (PCI 0x2330), found NVIDIA H100 80GB HBM3"
    )


@pytest.mark.parametrize(("name", "match"), [("Apple M4 Max", True), ("Apple M4 Pro", False)])
def test_a_class_without_pci_ids_is_known_by_its_name(name, match):
    device = {"index": 0, "vendor": "apple", "name": name}
    assert matches_spec(device, load_spec("m4max")) is match
    assert matches_spec({"index": 0, "vendor": "apple"}, load_spec("m4max")) is False


def test_an_apple_machine_is_detected_by_name():
    facts = host({}, [{"index": 0, "vendor": "apple", "name": "Apple M4 Max"}])
    name, how = detect_class(facts, load_all())
    assert (name, how) == ("m4max", "1 x Apple M4 Max matches expected/m4max.json")


def test_an_unknown_device_is_told_how_to_proceed_in_full():
    facts = host({}, [{"index": 0, "vendor": "nvidia", "name": "X", "pci": {"device_id": "0x1"}}])
    assert detect_class(facts, load_all()) == (
        None,
        "1 x X (PCI 0x1) matches no class in expected/: name one with -m CLASS, "
        "or add a spec file for it",
    )


@pytest.mark.parametrize(("count", "listed"), [(6, "k0, k1, k2, k3, k4, k0"),
                                               (7, "k0, k1, k2, k3, k4, k5, ...")])  # fmt: skip
def test_a_duplicate_key_names_the_object_s_first_six_keys(tmp_path, count, listed):
    keys = [f"k{i}" for i in range(count - 1)] + ["k0"]
    path = tmp_path / "h100.json"
    path.write_text("{" + ", ".join(f'"{k}": {i}' for i, k in enumerate(keys)) + "}")
    with pytest.raises(SpecError) as err:
        load_spec_file(path)
    assert str(err.value) == (f"{path}: key 'k0' appears twice in one object ({listed}): keep one")


def test_a_device_whose_name_cannot_be_read_is_named_by_vendor_and_error():
    device = {"vendor": "nvidia", "name": {"error": "NVML_ERROR_UNKNOWN"}}
    assert describe_device(device) == "an unreadable nvidia device (NVML_ERROR_UNKNOWN)"
    assert describe_device({"vendor": "amd", "name": None}) == "amd device"


def test_a_class_with_two_pci_ids_names_both():
    device = {
        "index": 3,
        "vendor": "amd",
        "name": "AMD Instinct MI250X",
        "pci": {"device_id": "0x740C"},
    }
    (problem,) = identity_problems(host({}, [device]), load_spec("mi300x"))
    assert problem == (
        "GPU 3: expected AMD Instinct MI300X (CDNA3, 192 GB HBM3), ROCm torch "
        "(PCI 0x74A1, 0x74B5), found AMD Instinct MI250X (PCI 0x740C)"
    )


@pytest.mark.parametrize(("found", "expected"), [(8, 8), (4, 4), (7, 8), (3, 4), (0, 8)])
def test_a_node_size_the_class_does_not_come_in_is_judged_against_the_next_size_up(found, expected):
    assert expected_gpu_count(load_spec("l40s"), found) == expected
    assert expected_gpu_count(load_spec("l40s"), found, override=2) == 2


def refusal(tmp_path, change, name: str = "h100") -> str:
    """The one-line SpecError for a class's spec with `change` applied, the path cut off."""
    data = json.loads((SPEC_DIR / f"{name}.json").read_text())
    change(data)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data))
    with pytest.raises(SpecError) as err:
        load_spec_file(path)
    return str(err.value).removeprefix(f"{path}: ")


def test_an_unknown_class_lists_the_known_ones():
    with pytest.raises(UnknownClassError) as err:
        load_spec("h1000")
    assert str(err.value) == (
        f"unknown device class 'h1000'. Known classes: {', '.join(known_classes())}"
    )
    assert ", h100, h100_pcie, " in str(err.value)


def test_a_refusal_is_one_line_of_at_most_300_characters():
    assert _one_line("at $.x: a\n  multi-line\tvalue") == "at $.x: a multi-line value"
    assert _one_line("x" * 300) == "x" * 300
    assert _one_line("x" * 301) == "x" * 297 + "..."


def test_a_wrong_item_in_a_list_is_named_by_its_index(tmp_path):
    message = refusal(tmp_path, lambda d: d["identity"].update(pci_device_ids=["0x2330", 5]))
    assert message == "invalid spec at $.identity.pci_device_ids[1]: 5 is not of type 'string'"


def test_an_expectation_in_another_unit_quotes_the_unit(tmp_path):
    message = refusal(tmp_path, lambda d: d["expect"]["tdp"].update(unit="GiB"))
    assert (
        message == "invalid spec at $.expect.tdp.unit: 'GiB' does not fit tdp, which is always in W"
    )


def test_a_null_memory_floor_is_refused(tmp_path):
    message = refusal(tmp_path, lambda d: d["expect"]["memory_per_device"].update(floor=None))
    assert (
        message
        == "invalid spec at $.expect.memory_per_device.floor: the memory floor must be stated"
    )


def test_every_unknown_figure_is_counted_and_the_known_ones_listed(tmp_path):
    def two_unknown(data):
        figure = data["figures"]["matmul_fp32_tflops"]
        data["figures"].update(zzz=figure, qqq=figure)

    message = refusal(tmp_path, two_unknown)
    known = ", ".join(FIGURE_UNITS)
    problem = f"at $.figures.zzz: no check measures a figure named 'zzz'; known: {known}"
    assert message == f"invalid spec {problem[:297]}... (and 1 more)"


def test_a_gpu_class_without_pci_ids_is_refused(tmp_path):
    message = refusal(tmp_path, lambda d: d["identity"].update(pci_device_ids=[]))
    assert message == (
        "invalid spec at $.identity.pci_device_ids: a GPU class must list its PCI device ids"
    )


def test_a_cpu_class_expecting_a_gpu_is_refused(tmp_path):
    message = refusal(tmp_path, lambda d: d["expect"]["gpu_count"].update(value=1), "cpu")
    assert message == (
        "invalid spec at $.expect.gpu_count.value: 1 is no valid count; it must be 0 on a "
        "CPU-only class"
    )


def test_node_sizes_that_leave_out_the_class_s_own_count_are_refused(tmp_path):
    message = refusal(tmp_path, lambda d: d["expect"]["gpu_count"].update(allowed=[2, 4, 8]))
    assert message == (
        "invalid spec at $.expect.gpu_count.allowed: [2, 4, 8] leaves out the class's own count 1"
    )


def written(tmp_path, text: str) -> str:
    """The one-line SpecError for an h100.json holding `text`, the path cut off."""
    path = tmp_path / "h100.json"
    path.write_text(text)
    with pytest.raises(SpecError) as err:
        load_spec_file(path)
    return str(err.value).removeprefix(f"{path}: ")


def test_nan_in_a_list_is_named_by_its_json_path(tmp_path):
    data = json.loads((SPEC_DIR / "h100.json").read_text())
    data["expect"]["memory_per_device"]["healthy_totals"][1]["value"] = "NAN-HERE"
    message = written(tmp_path, json.dumps(data).replace('"NAN-HERE"', "NaN"))
    assert message == (
        "invalid spec at $.expect.memory_per_device.healthy_totals[1].value: NaN is not a finite "
        "number; JSON has no NaN or Infinity"
    )


def test_a_missing_or_too_deep_file_is_one_line(tmp_path):
    with pytest.raises(SpecError) as err:
        load_spec_file(tmp_path / "h100.json")
    assert str(err.value) == f"{tmp_path / 'h100.json'}: no such spec file"
    assert written(tmp_path, "[" * 100_000 + "]" * 100_000) == "is nested too deeply to be a spec"
