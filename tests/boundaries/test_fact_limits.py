"""Fact limits of every class, judged by the real fact suite on replayed snapshots: the memory
floor (GiB, not GB), the driver minimum of each class and of each CUDA major (against NVIDIA's
published table), the smoke kernels' results (empty, without `ok`, one of N wrong), and a node
that mixes two products."""

from __future__ import annotations

import copy
import math

import pytest
from class_turns import this_turn

from rigcheck.spec import GIB, load_spec, spec_dir
from rigcheck.testing.synthetic import synthetic_snapshot

CLASSES = sorted(p.stem for p in spec_dir().glob("*.json") if p.stem != "spec.schema")
GPU_CLASSES = [n for n in CLASSES if load_spec(n).backend in ("cuda", "rocm")]
CUDA_CLASSES = [n for n in CLASSES if load_spec(n).backend == "cuda"]

# NVIDIA, CUDA Toolkit release notes, "CUDA Toolkit and Minimum Required Driver Version for
# CUDA Minor Version Compatibility" (Linux x86_64), and CUDA Compatibility guide, table 1
# (docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html):
#   CUDA 11.x >= 450.80.02, CUDA 12.x >= 525.60.13, CUDA 13.x >= 580 (the first R580
#   production driver, shipped with CUDA 13.0 GA: 580.65.06).
PUBLISHED_MIN_DRIVER = {11: "450.80.02", 12: "525.60.13", 13: "580.65.06"}


def failed(run) -> dict[str, str]:
    return {n: run.messages[n] for n, o in run.outcomes.items() if o == "failed"}


def just_below(version: str) -> str:
    """The release just before: 525.60.13 -> 525.60.12."""
    parts = version.split(".")
    parts[-1] = str(int(parts[-1]) - 1).zfill(len(parts[-1]))
    return ".".join(parts)


# ---- memory ----


# One turn of the classes per run (tests/class_turns.py): every class over four commits.
@pytest.mark.parametrize("name", this_turn(GPU_CLASSES))
def test_memory_floor_in_gib_on_every_gpu_class(run_suite, name):
    """GPU 0 one byte under the floor, GPU 1 at it (the first whole byte), GPU 2 the floor
    read as GB."""
    spec = load_spec(name)
    floor = spec.expect("memory_per_device")["floor"]["value"]
    facts = synthetic_snapshot(spec, gpus=3)
    totals = [math.ceil(floor * GIB) - 1, math.ceil(floor * GIB), round(floor * 1e9)]
    for device, total in zip(facts["devices"], totals, strict=True):
        device["memory_total_bytes"] = total
    run = run_suite(
        "facts", "-m", f"{name} and facts", "--gpus", "3", "-k", "memory_per_device", facts=facts
    )
    message = run.messages.get("test_memory_per_device", "")
    assert run.outcomes["test_memory_per_device"] == "failed", run.describe()
    assert f"memory below the {name} floor of {floor} GiB: GPU 0 " in message, message
    assert f"{facts['devices'][0]['pci']['bus_id']}" in message
    assert "GPU 2 " in message and "GPU 1 " not in message, message
    for device in facts["devices"]:
        device["memory_total_bytes"] = math.ceil(floor * GIB)
    run = run_suite(
        "facts", "-m", f"{name} and facts", "--gpus", "3", "-k", "memory_per_device", facts=facts
    )
    assert run.outcomes["test_memory_per_device"] == "passed", run.describe()


@pytest.mark.parametrize("name", this_turn([n for n in CLASSES if n not in GPU_CLASSES]))
def test_memory_floor_of_the_host_and_apple_classes(run_suite, name):
    spec = load_spec(name)
    floor = spec.expect("memory_per_device")["floor"]["value"]
    facts = synthetic_snapshot(spec)
    where = facts["host"] if spec.backend == "cpu" else facts["devices"][0]
    for total, outcome in (
        (math.ceil(floor * GIB) - 1, "failed"),
        (round(floor * 1e9), "failed"),  # the floor read as GB
        (math.ceil(floor * GIB), "passed"),
    ):
        where["memory_total_bytes"] = total
        run = run_suite("facts", "-m", f"{name} and facts", "-k", "memory_per_device", facts=facts)
        assert run.outcomes["test_memory_per_device"] == outcome, (total, run.describe())
        if outcome == "failed":
            assert (
                f"memory below the {name} floor of {floor} GiB"
                in run.messages["test_memory_per_device"]
            )


# ---- driver minimums ----


@pytest.mark.parametrize("major", sorted(PUBLISHED_MIN_DRIVER))
def test_driver_minimum_of_each_cuda_major_is_nvidias(run_suite, major):
    """torch built with CUDA major.x: NVIDIA's minimum driver passes, the release before fails."""
    minimum = PUBLISHED_MIN_DRIVER[major]
    facts = synthetic_snapshot(load_spec("h100"))
    facts["software"]["torch"]["cuda_version"] = f"{major}.1"
    args = ("facts", "-m", "h100 and facts", "-k", "test_driver_supports_torch_cuda")
    facts["software"]["nvidia_driver"]["version"] = minimum
    run = run_suite(*args, facts=facts)
    assert run.outcomes["test_driver_supports_torch_cuda"] == "passed", run.describe()
    facts["software"]["nvidia_driver"]["version"] = just_below(minimum)
    run = run_suite(*args, facts=facts)
    assert set(failed(run)) == {"test_driver_supports_torch_cuda"}, run.describe()
    assert (
        f"driver {just_below(minimum)} is too old for torch's CUDA {major}.1: CUDA {major}.x "
        f"needs driver >= {minimum}." in run.messages["test_driver_supports_torch_cuda"]
    )


def test_a_cuda_major_without_a_known_minimum_fails_closed(run_suite):
    facts = synthetic_snapshot(load_spec("h100"))
    facts["software"]["torch"]["cuda_version"] = "14.0"
    run = run_suite(
        "facts", "-m", "h100 and facts", "-k", "test_driver_supports_torch_cuda", facts=facts
    )
    assert "rigcheck does not know the oldest driver for CUDA 14.x" in run.messages.get(
        "test_driver_supports_torch_cuda", ""
    ), run.describe()


@pytest.mark.parametrize("name", this_turn(CUDA_CLASSES))
def test_class_driver_minimum(run_suite, name):
    spec = load_spec(name)
    minimum = spec.expected_value("min_driver")
    facts = synthetic_snapshot(spec)
    args = ("facts", "-m", f"{name} and facts", "-k", "test_driver_meets_class_minimum")
    for version, outcome in ((minimum, "passed"), (just_below(minimum), "failed")):
        facts["software"]["nvidia_driver"]["version"] = version
        run = run_suite(*args, facts=facts)
        assert run.outcomes["test_driver_meets_class_minimum"] == outcome, run.describe()
    assert (
        f"driver {just_below(minimum)} is older than {minimum}, the first that supports"
        in (run.messages["test_driver_meets_class_minimum"])
    )


# ---- smoke kernels ----


def test_smoke_results_empty_without_ok_or_wrong_fail(run_suite):
    """A GPU kernel that ran and gave a wrong answer, an empty list, a result without `ok`."""
    facts = synthetic_snapshot(load_spec("h100"), gpus=2)
    good = copy.deepcopy(facts["smoke"]["bf16_matmul"][0])
    facts["smoke"]["bf16_matmul"][1] = {"ran": True, "max_rel_err": 0.9, "ok": False}
    facts["smoke"]["fp8_matmul"] = []
    facts["smoke"]["flash_attn_forward"] = {"ran": True, "max_abs_err": 0.00049}
    args = ("facts", "-m", "h100 and facts", "--gpus", "2", "-k", "runs")
    run = run_suite(*args, facts=facts)
    messages = failed(run)
    assert set(messages) == {
        "test_bf16_matmul_runs",
        "test_fp8_matmul_runs",
        "test_flash_attn_forward_runs",
    }, run.describe()
    assert (
        "cuda:1 (0000:2a:00.0): {'ran': True, 'max_rel_err': 0.9, 'ok': False}"
        in messages["test_bf16_matmul_runs"]
    )
    assert "cuda:0" not in messages["test_bf16_matmul_runs"]
    assert "cannot judge: smoke.fp8_matmul is [] (empty)" in messages["test_fp8_matmul_runs"]
    assert (
        "cannot judge: smoke.flash_attn_forward.ok is missing"
        in messages["test_flash_attn_forward_runs"]
    )
    # the other way round: the first of two without its `ok`, the second wrong
    facts["smoke"]["bf16_matmul"] = [{"ran": True, "max_rel_err": 0.0031}, good]
    facts["smoke"]["fp8_matmul"] = [good, {"ran": True, "ok": False}]
    facts["smoke"]["flash_attn_forward"] = {"ran": True, "ok": True}
    run = run_suite(*args, facts=facts)
    assert set(failed(run)) == {"test_bf16_matmul_runs", "test_fp8_matmul_runs"}, run.describe()
    assert (
        "cannot judge: smoke.bf16_matmul.0.ok is missing" in run.messages["test_bf16_matmul_runs"]
    )
    assert (
        "cuda:1 (0000:2a:00.0): {'ran': True, 'ok': False}" in run.messages["test_fp8_matmul_runs"]
    )


@pytest.mark.parametrize("name", ["cpu", "m4pro"])
def test_host_smoke_matmul_without_ok_fails(run_suite, name):
    spec = load_spec(name)
    facts = synthetic_snapshot(spec)
    if name == "cpu":
        facts["smoke"]["cpu_bf16_matmul"] = {"ran": True, "max_rel_err": 0.0024}
    else:
        facts["smoke"]["mps"]["bf16_matmul"] = {"ran": True, "ok": False}
    run = run_suite("facts", "-m", f"{name} and facts", "-k", "bf16_matmul_runs", facts=facts)
    assert failed(run).keys() == {"test_bf16_matmul_runs"}, run.describe()
    message = run.messages["test_bf16_matmul_runs"]
    if name == "cpu":  # no `ok`: the fact cannot be judged
        assert "cannot judge: smoke.cpu_bf16_matmul.ok is missing" in message
    else:  # ran and said wrong
        assert 'a bf16 matmul did not run or gave a wrong answer: ["mps: ' in message


# ---- a node that mixes products ----


def test_a_mixed_node_names_the_odd_gpu(run_suite):
    """An H100 SXM node with one H100 PCIe card in it: identity fails naming GPU 1 only."""
    facts = synthetic_snapshot(load_spec("h100"), gpus=2)
    pcie = synthetic_snapshot(load_spec("h100_pcie"), gpus=2)["devices"][1]
    facts["devices"][1] = pcie
    run = run_suite("facts", "-m", "h100 and facts", "--gpus", "2", "-k", "identity", facts=facts)
    message = run.messages.get("test_product_matches_class", "")
    assert run.outcomes["test_product_matches_class"] == "failed", run.describe()
    assert "GPU 1: expected NVIDIA H100 SXM5 80GB (HBM3) (PCI 0x2330), found" in message
    assert "GPU 0:" not in message, message


def test_a_smoke_list_shorter_than_the_gpus_fails(run_suite):
    facts = synthetic_snapshot(load_spec("h100"), gpus=2)
    facts["smoke"]["bf16_matmul"] = facts["smoke"]["bf16_matmul"][:1]
    facts["smoke"]["fp8_matmul"] = facts["smoke"]["fp8_matmul"][:1]
    run = run_suite(
        "facts", "-m", "h100 and facts", "--gpus", "2", "-k", "matmul_runs", facts=facts
    )
    assert set(failed(run)) == {"test_bf16_matmul_runs", "test_fp8_matmul_runs"}, run.describe()
