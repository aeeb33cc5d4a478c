"""How a check reads a fact: typed.py's verdict on every kind of value (each placeholder and
each allowed answer member by member, a wrong type, a null, an empty container, a number at
zero and just below), the exact "cannot judge" message require.py builds from it, and
limits.py's fail-closed health limits. Pure functions: the whole file runs in about a second.
"""

from __future__ import annotations

import copy
import math

import pytest

from rigcheck.errors import FactUnavailable
from rigcheck.facts import Facts, fact_type, typed
from rigcheck.facts.fact_type import FactType, problem
from rigcheck.limits import health_limit, newer_fact, nvidia_only
from rigcheck.require import (
    cuda_label,
    device_fact,
    device_value,
    device_values,
    expected,
    fact,
    gpu_label,
    needs_backend,
    require,
    shown,
    version_tuple,
)
from rigcheck.spec import Spec, load_spec
from rigcheck.testing.synthetic import synthetic_snapshot


def outcome(call, *args, **kwargs) -> tuple[str, str]:
    try:
        value = call(*args, **kwargs)
    except pytest.xfail.Exception as exc:
        return "xfailed", str(exc)
    except pytest.fail.Exception as exc:
        return "failed", str(exc)
    except pytest.skip.Exception as exc:
        return "skipped", str(exc)
    return "value", value


# ---- fact_type.problem: what makes a value unfit to judge ----


@pytest.mark.parametrize("kind", ["bool", "count", "number", "text", "version", "list", "object"])
def test_null_is_a_problem_unless_declared_a_real_answer(kind):
    assert problem(None, FactType(kind, "why")) == "null"
    assert problem(None, FactType(kind, "why", nullable=True)) is None


@pytest.mark.parametrize(
    ("value", "verdict"),
    [(True, None), (False, None), (0, "not a boolean"), (1, "not a boolean"),
     ("true", "not a boolean"), ([], "not a boolean")],
)  # fmt: skip
def test_bool(value, verdict):
    assert problem(value, FactType("bool", "why")) == verdict


@pytest.mark.parametrize(
    ("value", "count", "number"),
    [
        (0, None, None),  # zero is a real count: `< 0`, not `<= 0`
        (1, None, None),
        (16.0, None, None),  # a JSON writer's integer is still sixteen
        (2.5, "not a whole number", None),
        (0.0, None, None),
        (-1, "out of range", "out of range"),
        (-0.5, "not a whole number", "out of range"),
        (math.inf, "not a whole number", "out of range"),
        (math.nan, "not a whole number", "out of range"),
        (True, "not a number", "not a number"),
        (False, "not a number", "not a number"),
        ("16", "not a number", "not a number"),
        (None, "null", "null"),
        ([1], "not a number", "not a number"),
    ],
)
def test_count_and_number(value, count, number):
    assert problem(value, FactType("count", "why")) == count
    assert problem(value, FactType("number", "why")) == number


@pytest.mark.parametrize("placeholder", sorted(fact_type.PLACEHOLDERS))
@pytest.mark.parametrize("kind", ["text", "version", "choice"])
def test_every_placeholder_is_no_value(placeholder, kind):
    ftype = FactType(kind, "why", choices=("cuda",))
    for spelling in (placeholder, placeholder.upper(), f"  {placeholder} "):
        assert problem(spelling, ftype) == "a placeholder, not a value", spelling


@pytest.mark.parametrize(
    ("value", "verdict"),
    [("12.4", None), ("12", None), ("535.104.05", None), ("2.5.1+cu124", None),
     ("2.21.5-1", None), ("1.0~rc1", None), ("12.", "not a version"), ("v12.4", "not a version"),
     ("abc", "not a version"), ("12.4 ", "not a version"), (12.4, "not a string")],
)  # fmt: skip
def test_version(value, verdict):
    assert problem(value, FactType("version", "why")) == verdict


def test_text():
    assert problem("NVIDIA H100", FactType("text", "why")) is None
    assert problem(7, FactType("text", "why")) == "not a string"
    assert problem(["a"], FactType("text", "why")) == "not a string"


@pytest.mark.parametrize("path", [p for p, t in typed.TYPES.items() if t.kind == "choice"])
def test_every_declared_choice_member_by_member(path):
    ftype = typed.declared(path)
    for choice in ftype.choices:
        assert problem(choice, ftype) is None, choice  # "none" is an answer, not a placeholder
    assert problem("something-else", ftype) == "not one of the known values"
    assert problem(ftype.choices[0].upper() + "x", ftype) == "not one of the known values"
    assert problem(1, ftype) == "not a string"


def test_lists():
    plain = FactType("list", "why")
    assert problem([], plain) is None
    assert problem([1, "a", None], plain) is None  # no item kind: items are not judged
    assert problem("a", plain) == "not a list"
    assert problem({"a": 1}, plain) == "not a list"
    assert problem([], FactType("list", "why", empty_ok=False)) == "empty"
    assert problem([0], FactType("list", "why", empty_ok=False)) is None
    texts = FactType("list", "why", items="text")
    assert problem(["a", "b"], texts) is None
    assert problem(["a", 3], texts) == "has an item that is not a string"
    assert problem(["a", "N/A", 3], texts) == "has an item that is a placeholder, not a value"
    counts = FactType("list", "why", items="count")
    assert problem([0, 1], counts) is None
    assert problem([0, -1], counts) == "has an item that is out of range"
    assert problem([0, None], counts) == "has an item that is null"


def test_objects():
    assert problem({"a": 1}, FactType("object", "why")) is None
    assert problem({}, FactType("object", "why")) == "empty"
    assert problem([("a", 1)], FactType("object", "why")) == "not an object"
    assert problem("x", FactType("object", "why")) == "not an object"


def test_an_unknown_kind_is_a_rigcheck_bug():
    with pytest.raises(ValueError, match=r"^unknown fact kind 'float'$"):
        problem(1.0, FactType("float", "why"))


# ---- typed: messages, paths, recording ----


@pytest.mark.parametrize(
    ("ftype", "words"),
    [
        (FactType("bool", ""), "a boolean (true/false)"),
        (FactType("count", "", unit="bytes"), "a whole number >= 0 in bytes"),
        (FactType("number", "", unit="W"), "a finite number >= 0 in W"),
        (FactType("text", ""), "a non-empty string"),
        (FactType("version", ""), "a version string like '12.4'"),
        (FactType("list", ""), "a list"),
        (
            FactType("list", "", empty_ok=False, items="object"),
            "a list (not empty) of object values",
        ),
        (FactType("object", ""), "an object"),
        (FactType("choice", "", choices=("cuda", "rocm")), "one of cuda, rocm"),
    ],
)
def test_what_each_kind_is_called_in_a_message(ftype, words):
    assert ftype.expected() == words


@pytest.mark.parametrize(
    ("path", "source"),
    [("devices.0.ecc", typed.NVML), ("host.cpu.model", typed.HOST),
     ("software.torch.version", typed.TORCH), ("smoke.bf16_matmul", typed.SMOKE),
     ("kernel_log.source", typed.KERNEL_LOG), ("host_limits.shm_bytes", typed.HOST_LIMITS),
     ("topology.gpus", typed.TOPO), ("anything", typed.TOPO)],
)  # fmt: skip
def test_how_to_read_each_section(path, source):
    assert typed.how_to_read(path) == source


def test_paths_and_declarations():
    assert typed.pattern_of("devices.3.ecc.current") == "devices.*.ecc.current"
    assert typed.pattern_of("devices.12.nvlink.17.active") == "devices.*.nvlink.*.active"
    assert typed.pattern_of("host.cpu.model") == "host.cpu.model"
    assert typed.declared("devices.5.pcie_replays") is typed.TYPES["devices.*.pcie_replays"]
    with pytest.raises(KeyError) as caught:
        typed.declared("devices.0.colour")
    assert caught.value.args[0] == (
        "fact 'devices.0.colour' has no declared type: add it to rigcheck/facts/typed.py TYPES"
    )
    assert caught.value.__suppress_context__


def test_recording_which_facts_were_judged():
    typed.start_recording()
    devices = synthetic_snapshot(load_spec("h100"), gpus=2)["devices"]
    device_value(devices[1], "ecc.current")
    device_value(devices[0], "pcie.gen_max", required=True)
    judged, unsupported_ok = typed.stop_recording()
    assert judged == {"devices.1.ecc.current", "devices.0.pcie.gen_max"}
    assert unsupported_ok == {"devices.1.ecc"}
    assert typed.last_read == "devices.0.pcie.gen_max"
    device_value(devices[0], "ecc.current")  # not recording: nothing kept, last read still noted
    assert typed.stop_recording() == (set(), {"devices.1.ecc"})
    assert typed.last_read == "devices.0.ecc.current"
    typed.start_recording()
    assert typed.stop_recording() == (set(), set())  # a new recording starts empty


# ---- require.py: reading facts, and the message when one cannot be judged ----


def h100(gpus: int = 1) -> dict:
    return synthetic_snapshot(load_spec("h100"), gpus=gpus)


def test_fact_returns_a_good_value_and_null_only_where_declared():
    data = h100()
    assert fact(Facts(data), "software.torch.build") == "cuda"
    data["software"]["nvcc"] = None
    assert fact(Facts(data), "software.nvcc") is None
    data["software"]["torch"]["build"] = None
    assert outcome(fact, Facts(data), "software.torch.build") == (
        "failed",
        "cannot judge: software.torch.build is None (null), expected one of cuda, rocm, cpu: it "
        f"says which accelerator torch was built for. {typed.TORCH}",
    )


def test_fact_missing_unreadable_or_inside_a_non_object():
    data = h100()
    del data["software"]["torch"]["cuda_available"]
    assert outcome(fact, Facts(data), "software.torch.cuda_available") == (
        "failed",
        "cannot judge: software.torch.cuda_available is missing (software.torch.cuda_available "
        "is not in the snapshot: recorded by an older rigcheck, or edited by hand?)",
    )
    data["software"]["torch"] = {"error": "ImportError: no torch"}
    assert outcome(fact, Facts(data), "software.torch.version") == (
        "failed",
        "cannot judge: software.torch.version: software.torch could not be read: "
        "ImportError: no torch",
    )
    assert outcome(fact, Facts(data), "software.torch") == (
        "failed",
        "cannot judge: software.torch could not be read: ImportError: no torch",
    )
    data["host"]["cpu"] = 5
    assert outcome(fact, Facts(data), "host.cpu.model") == (
        "failed",
        "cannot judge: host.cpu.model: host.cpu is 5, expected an object",
    )
    data["smoke"]["bf16_matmul"] = [{"ok": True}]
    assert outcome(fact, Facts(data), "smoke.bf16_matmul.1.ok")[1] == (
        "cannot judge: smoke.bf16_matmul.1.ok is missing (smoke.bf16_matmul.1 is not in the "
        "snapshot: recorded by an older rigcheck, or edited by hand?)"
    )
    assert outcome(fact, Facts(data), "smoke.bf16_matmul.0.ok") == ("value", True)
    data["smoke"]["bf16_matmul"] = "ran"
    assert outcome(fact, Facts(data), "smoke.bf16_matmul.0.ok") == (
        "failed",
        "cannot judge: smoke.bf16_matmul.0.ok: smoke.bf16_matmul is 'ran', expected a list",
    )


def test_device_value_names_the_gpu_and_says_not_supported():
    devices = h100(gpus=2)["devices"]
    where = f"GPU 1 ({devices[1]['pci']['bus_id']})"
    devices[1]["ecc"] = None
    assert device_value(devices[1], "ecc.current") is None
    assert outcome(device_value, devices[1], "ecc.current", required=True) == (
        "failed",
        f"cannot judge: ecc.current of {where}: ecc is not supported by this device or driver "
        "(NVML: Not Supported), as in a vGPU guest. This class needs it: run on bare metal or "
        "GPU passthrough, or upgrade the driver.",
    )
    devices[1]["ecc"] = {"current": None, "pending": True}  # a null below the first key is judged
    assert outcome(device_value, devices[1], "ecc.current") == (
        "failed",
        f"cannot judge: ecc.current of {where} is None (null), expected a boolean (true/false): "
        f"it says whether memory errors are corrected now. {typed.NVML}",
    )
    devices[1]["ecc"] = {"error": "NVMLError_Unknown"}
    assert outcome(device_value, devices[1], "ecc.current") == (
        "failed",
        f"cannot judge: ecc.current of {where}: ecc could not be read: NVMLError_Unknown",
    )
    devices[1]["pcie_replays"] = "N/A"
    assert outcome(device_value, devices[1], "pcie_replays")[1].startswith(
        f"cannot judge: pcie_replays of {where} is 'N/A' (not a number), expected "
        "a whole number >= 0: it says PCIe packets resent"
    )
    assert device_value(devices[0], "pcie_replays", required=True) == 0
    pairs = device_fact(devices[:1], "pci.bus_id")
    assert pairs == [(devices[0], devices[0]["pci"]["bus_id"])]
    assert device_values(devices[:1], "pci.bus_id", required=True) == pairs


def test_require_fails_with_the_reason():
    data = h100()
    data["host"] = {"error": "psutil missing"}
    assert outcome(require, Facts(data), "host.cpu") == (
        "failed",
        "cannot check: fact 'host' could not be read: psutil missing",
    )
    assert outcome(require, Facts(data), "origin.kind") == ("value", "synthetic")


def test_expected_and_needs_backend_skip_saying_why():
    spec = load_spec("rtx4090")
    assert outcome(expected, spec, "tdp") == ("value", 450)
    assert outcome(expected, spec, "persistence_mode") == (
        "skipped",
        f"persistence mode does not apply to rtx4090 ({spec.title})",
    )
    data = copy.deepcopy(spec.data)
    del data["expect"]["min_driver"]
    assert outcome(expected, Spec(data, spec.path), "min_driver") == (
        "skipped",
        f"min driver does not apply to rtx4090 ({spec.title})",
    )
    assert outcome(needs_backend, spec, "cuda", "rocm") == ("value", None)
    assert outcome(needs_backend, spec, "mps") == (
        "skipped",
        "only for mps classes; rtx4090 is cuda",
    )
    assert outcome(needs_backend, spec, "rocm", "mps")[1] == (
        "only for rocm/mps classes; rtx4090 is cuda"
    )


def test_labels_shown_values_and_versions():
    device = {"index": 3, "pci": {"bus_id": "0000:18:00.0"}, "power": {"w": 7.5, "b": True}}
    assert gpu_label(device) == "GPU 3 (0000:18:00.0)"
    assert gpu_label({"index": 2, "pci": None}) == "GPU 2"
    assert gpu_label({"index": 2, "pci": {"bus_id": None}}) == "GPU 2"
    assert shown(device, "power.w") == "7.5"
    assert shown(device, "index") == "3"
    assert shown(device, "pci.bus_id") == "0000:18:00.0"
    assert shown(device, "power.b") == "?"
    assert shown(device, "power.missing") == "?"
    assert shown(device, "pci.bus_id.deeper") == "?"
    assert shown(device, "pci") == "?"
    data = h100(gpus=2)
    bus = data["software"]["torch"]["devices"][1]["pci_bus_id"]
    assert cuda_label(Facts(data), 1) == f"cuda:1 ({bus})"
    data["software"]["torch"]["devices"][1]["pci_bus_id"] = None
    assert cuda_label(Facts(data), 1) == "cuda:1"
    assert version_tuple("535.104.05") == (535, 104, 5)
    assert version_tuple("2.5.1+cu124") == (2, 5)
    assert version_tuple("12") == (12,)
    assert version_tuple("580.65.06") > version_tuple("580.9.1")


# ---- limits.py: health limits read fail closed ----


def test_health_limit_present_missing_or_not_a_number():
    spec = load_spec("h100")
    assert health_limit(spec, "pcie_replays_max") == 80
    assert health_limit(spec, "host_ram_per_gpu_memory_min") == 0.5
    message = (
        "cannot check: expected/h100.json has no health_limits.{} (a number with its unit and "
        "source): add it, as the other class files have it"
    )
    for value in (True, "80", None):
        data = copy.deepcopy(spec.data)
        data["health_limits"]["pcie_replays_max"]["value"] = value
        assert outcome(health_limit, Spec(data, spec.path), "pcie_replays_max") == (
            "failed",
            message.format("pcie_replays_max"),
        ), value
    data = copy.deepcopy(spec.data)
    data["health_limits"]["pcie_replays_max"] = 80  # a bare number, no unit or source
    assert outcome(health_limit, Spec(data, spec.path), "pcie_replays_max")[0] == "failed"
    del data["health_limits"]
    assert outcome(health_limit, Spec(data, spec.path), "retired_pages_max") == (
        "failed",
        message.format("retired_pages_max"),
    )


def test_nvidia_only():
    assert outcome(nvidia_only, load_spec("h100"), "counters") == ("value", None)
    assert outcome(nvidia_only, load_spec("mi300x"), "error counters") == (
        "xfailed",
        "AMD error counters are not probed yet: needs amdsmi",
    )
    assert outcome(nvidia_only, load_spec("m4pro"), "error counters") == (
        "skipped",
        "error counters: only NVIDIA classes report them; m4pro is apple",
    )
    assert outcome(nvidia_only, load_spec("cpu"), "clocks")[0] == "skipped"


def test_newer_fact_skips_only_an_older_recording():
    data = h100()
    assert newer_fact(Facts(data), "host_limits.shm_bytes") == data["host_limits"]["shm_bytes"]
    data["origin"] = {"kind": "recorded", "rigcheck_version": "0.0.9"}
    assert newer_fact(Facts(data), "host_limits.rdma_devices") == 8
    del data["host_limits"]
    assert outcome(newer_fact, Facts(data), "host_limits.shm_bytes") == (
        "skipped",
        "host_limits is not in this recording (rigcheck 0.0.9 did not probe it yet): record the "
        "machine again with `rigcheck facts -o FILE` to judge it",
    )
    del data["origin"]["rigcheck_version"]
    assert "(rigcheck ? did not probe it yet)" in outcome(newer_fact, Facts(data), "host_limits")[1]
    data["origin"] = {"kind": "synthetic"}  # not a recording: a missing section fails closed
    assert outcome(newer_fact, Facts(data), "host_limits.shm_bytes")[0] == "failed"
    data["origin"] = {"kind": "recorded"}
    data["host_limits"] = {}
    assert outcome(newer_fact, Facts(data), "host_limits.shm_bytes")[0] == "failed"


def test_fact_unavailable_says_which_and_why():
    assert str(FactUnavailable("host", "gone")) == "fact 'host' could not be read: gone"


def test_a_device_fact_missing_below_its_first_key_is_named_in_full():
    devices = h100(gpus=2)["devices"]
    where = f"GPU 1 ({devices[1]['pci']['bus_id']})"
    devices[1]["ecc"] = {"pending": True}
    assert outcome(device_value, devices[1], "ecc.current", required=True) == (
        "failed",
        f"cannot judge: ecc.current of {where} is missing (ecc.current is not in the snapshot: "
        "recorded by an older rigcheck, or edited by hand?)",
    )
    devices[1]["ecc"] = {"current": {"error": "NVMLError_Unknown"}}
    assert outcome(device_value, devices[1], "ecc.current") == (
        "failed",
        f"cannot judge: ecc.current of {where} could not be read: NVMLError_Unknown",
    )
    devices[1]["nvlink"] = [5]
    assert outcome(device_value, devices[1], "nvlink.0.active")[1] == (
        f"cannot judge: nvlink.0.active of {where}: nvlink.0 is 5, expected an object"
    )


def test_fail_closed_failures_show_no_traceback():
    spec = load_spec("h100")
    data = copy.deepcopy(spec.data)
    del data["health_limits"]
    with pytest.raises(pytest.fail.Exception) as caught:
        health_limit(Spec(data, spec.path), "pcie_replays_max")
    assert caught.value.pytrace is False
    devices = h100()["devices"]
    devices[0]["ecc"] = None
    for call in (
        lambda: device_value(devices[0], "ecc.current", required=True),
        lambda: device_value({**devices[0], "mig": {"error": "x"}}, "mig.current"),
        lambda: fact(Facts({"software": {}}), "software.torch"),
        lambda: require(Facts({"host": {"error": "x"}}), "host.cpu"),
    ):
        with pytest.raises(pytest.fail.Exception) as caught:
            call()
        assert caught.value.pytrace is False
