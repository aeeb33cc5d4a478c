"""The software, precision, identity, kernel-log and Apple checks of suites/facts decided by
calling them on a class's synthetic facts: each version rule at its boundary (the same CUDA
major, one minor apart, one major apart), each build and backend member by member, each smoke
result and flash-attn state, asserting the decision and the message.
"""

from __future__ import annotations

import importlib

import pytest
from check_calls import call

from rigcheck.facts import Facts
from rigcheck.facts.kernel_log.xid_catalog import SOURCE, lookup
from rigcheck.require import gpu_label
from rigcheck.spec import GIB, Spec, load_spec
from rigcheck.testing.synthetic import synthetic_snapshot

stack = importlib.import_module("suites.facts.test_software_stack")
precision = importlib.import_module("suites.facts.test_precision")
identity = importlib.import_module("suites.facts.test_identity")
kernel_log = importlib.import_module("suites.facts.test_kernel_log")
apple = importlib.import_module("suites.facts.test_apple")


def decide(check, *args) -> tuple[str, str, list[str]]:
    """(outcome, message, the warnings' class names) of one check call."""
    return call(check, *args)


def node(name: str, gpus: int | None = None) -> tuple[Spec, Facts]:
    spec = load_spec(name)
    return spec, Facts(synthetic_snapshot(spec, gpus=gpus))


def label(d: dict) -> str:
    return gpu_label(d)


# ---- torch's build and devices ----


@pytest.mark.parametrize(("name", "want"), [("h100", "cuda"), ("mi300x", "rocm"), ("m4pro", "cpu")])
def test_torch_build_member_by_member(name, want):
    spec, facts = node(name)
    torch = facts.data["software"]["torch"]
    for build in ("cuda", "rocm", "cpu"):
        torch["build"] = build
        outcome, message, _ = decide(stack.test_torch_build_matches_class, facts, spec)
        if build == want:
            assert outcome == "passed", message
        else:
            assert (outcome, message) == (
                "failed",
                f"torch {torch['version']} is a {build} build; {name} needs a {want} build of "
                f"torch. Install the torch wheel built for {spec.backend.upper()} that matches "
                "the driver.",
            )


def test_torch_build_is_not_judged_on_a_cpu_class():
    spec, facts = node("cpu")
    assert decide(stack.test_torch_build_matches_class, facts, spec)[:2] == (
        "skipped",
        "only for cuda/rocm/mps classes; cpu is cpu",
    )


def test_torch_imports_needs_a_version():
    _, facts = node("h100")
    assert decide(stack.test_torch_imports, facts)[0] == "passed"
    facts.data["software"]["torch"]["version"] = "N/A"
    assert decide(stack.test_torch_imports, facts)[0] == "failed"


@pytest.mark.parametrize("name", ["h100", "mi300x"])
def test_torch_sees_every_gpu_or_fails(name):
    spec, facts = node(name, gpus=2)
    devices, torch = facts.devices, facts.data["software"]["torch"]
    torch.update(device_count=2, cuda_available=True)
    assert decide(stack.test_torch_sees_all_devices, facts, spec, devices)[0] == "passed"
    for count, available in ((1, True), (2, False), (3, True)):
        torch.update(device_count=count, cuda_available=available)
        assert decide(stack.test_torch_sees_all_devices, facts, spec, devices)[:2] == (
            "failed",
            f"the driver shows 2 GPU(s) but torch sees {count} (torch.cuda.is_available() = "
            f"{available}). Check CUDA_VISIBLE_DEVICES, the container's --gpus flag, and that "
            "torch's CUDA is not newer than the driver.",
        )


# ---- driver against torch's CUDA ----


def with_versions(torch_cuda, driver="570.133.20", driver_cuda="12.8", nvcc="12.8"):
    spec, facts = node("h100")
    software = facts.data["software"]
    software["torch"]["cuda_version"] = torch_cuda
    software["nvidia_driver"].update(version=driver, cuda_driver_version=driver_cuda)
    software["nvcc"]["version"] = nvcc
    return spec, facts


@pytest.mark.parametrize(
    ("minimum", "torch_cuda"),
    [("384.81", "9.0"), ("390.46", "9.1"), ("396.26", "9.2"), ("410.48", "10.0"),
     ("418.39", "10.1"), ("440.33", "10.2")],
)  # fmt: skip
def test_each_pre_11_cuda_minors_own_driver_minimum(minimum, torch_cuda):
    """No minor-version compatibility before CUDA 11: a V100 on a CUDA 10.1 stack is judged
    against 418.39 (it failed 'does not know the oldest driver for CUDA 10.x')."""
    check = stack.test_driver_supports_torch_cuda
    assert decide(check, *reversed(with_versions(torch_cuda, driver=minimum)))[0] == "passed"
    major, minor, *_ = (int(p) for p in [*minimum.split("."), "0"])
    below = f"{major}.{minor - 1:02d}"
    assert decide(check, *reversed(with_versions(torch_cuda, driver=below)))[:2] == (
        "failed",
        f"driver {below} is too old for torch's CUDA {torch_cuda}: CUDA {torch_cuda} needs driver "
        f">= {minimum}. Upgrade the driver, or install a torch built for an older CUDA.",
    )


@pytest.mark.parametrize(
    ("minimum", "torch_cuda"), [("450.80.02", "11.8"), ("525.60.13", "12.4"), ("580.65.06", "13.0")]
)
def test_each_cuda_majors_driver_minimum_at_and_below(minimum, torch_cuda):
    check = stack.test_driver_supports_torch_cuda
    assert decide(check, *reversed(with_versions(torch_cuda, driver=minimum)))[0] == "passed"
    parts = minimum.split(".")
    below = ".".join([*parts[:-1], f"{int(parts[-1]) - 1:02d}"])
    major = torch_cuda.split(".")[0]
    assert decide(check, *reversed(with_versions(torch_cuda, driver=below)))[:2] == (
        "failed",
        f"driver {below} is too old for torch's CUDA {torch_cuda}: CUDA {major}.x needs driver "
        f">= {minimum}. Upgrade the driver, or install a torch built for an older CUDA.",
    )


def test_a_torch_without_cuda_fails_every_cuda_rule():
    spec, facts = with_versions(None)
    for check in (
        stack.test_driver_supports_torch_cuda,
        stack.test_driver_cuda_not_older_than_torch_cuda,
        stack.test_nvcc_matches_torch_cuda,
    ):
        assert decide(check, facts, spec)[:2] == (
            "failed",
            "torch has no CUDA version: it is not a CUDA build",
        ), check.__name__
    spec, facts = with_versions("14.0")
    assert decide(stack.test_driver_supports_torch_cuda, facts, spec)[:2] == (
        "failed",
        "rigcheck does not know the oldest driver for CUDA 14.x (torch's CUDA 14.0): add it to "
        "MIN_DRIVER_FOR_CUDA_MAJOR from the CUDA release notes",
    )


@pytest.mark.parametrize(
    ("driver_cuda", "torch_cuda", "outcome", "warned"),
    [
        ("12.8", "12.8", "passed", []),
        ("12.9", "12.8", "passed", []),
        ("13.0", "12.8", "passed", []),
        ("12.7", "12.8", "passed", ["DriverOlderThanTorchCuda"]),  # one minor older
        ("12.0", "12.8", "passed", ["DriverOlderThanTorchCuda"]),
        ("11.8", "12.0", "failed", []),  # one major older
    ],
)
def test_driver_cuda_against_torch_cuda(driver_cuda, torch_cuda, outcome, warned):
    spec, facts = with_versions(torch_cuda, driver_cuda=driver_cuda)
    got, message, caught = decide(stack.test_driver_cuda_not_older_than_torch_cuda, facts, spec)
    assert (got, caught) == (outcome, warned), message
    if outcome == "failed":
        assert message.startswith(
            f"the driver supports CUDA up to {driver_cuda}, torch was built with CUDA "
            f"{torch_cuda}: torch cannot initialise CUDA. Upgrade the driver or use a torch "
            "built for CUDA 11.x."
        ), message


def test_the_driver_older_minor_warning_says_what_breaks():
    spec, facts = with_versions("12.8", driver_cuda="12.4")
    with pytest.warns(stack.DriverOlderThanTorchCuda) as caught:
        stack.test_driver_cuda_not_older_than_torch_cuda(facts, spec)
    assert str(caught[0].message) == (
        "the driver supports CUDA up to 12.4, torch was built with CUDA 12.8: it runs by "
        "minor-version compatibility, but kernels JIT-compiled from PTX (a GPU newer than "
        "torch's arch list, some triton paths) fail. Upgrade the driver to remove the risk."
    )


@pytest.mark.parametrize(
    ("nvcc", "torch_cuda", "outcome", "warned"),
    [
        ("12.8", "12.8", "passed", []),
        ("12.4", "12.8", "passed", ["NvccMinorMismatch"]),
        ("12.9", "12.8", "passed", ["NvccMinorMismatch"]),
        ("11.8", "12.8", "failed", []),
        ("13.0", "12.8", "failed", []),
    ],
)
def test_nvcc_against_torch_cuda(nvcc, torch_cuda, outcome, warned):
    spec, facts = with_versions(torch_cuda, nvcc=nvcc)
    got, message, caught = decide(stack.test_nvcc_matches_torch_cuda, facts, spec)
    assert (got, caught) == (outcome, warned), message
    path = facts.data["software"]["nvcc"]["path"]
    if outcome == "failed":
        assert message.startswith(
            f"nvcc at {path} is CUDA {nvcc}, torch was built with CUDA {torch_cuda}: extensions "
            "(flash-attn, apex, xformers) built here fail to build (torch's cpp_extension "
            "refuses a CUDA major mismatch). Put a CUDA 12.x toolkit first on PATH / in "
            "CUDA_HOME."
        ), message


def test_the_nvcc_minor_warning_and_no_nvcc():
    spec, facts = with_versions("12.8", nvcc="12.4")
    path = facts.data["software"]["nvcc"]["path"]
    with pytest.warns(stack.NvccMinorMismatch) as caught:
        stack.test_nvcc_matches_torch_cuda(facts, spec)
    assert str(caught[0].message) == (
        f"nvcc at {path} is CUDA 12.4, torch was built with CUDA 12.8: a minor mismatch, which "
        "torch's cpp_extension accepts with a warning. Extensions build; a matching toolkit "
        "removes the risk of a header difference."
    )
    facts.data["software"]["nvcc"] = None
    assert decide(stack.test_nvcc_matches_torch_cuda, facts, spec)[:2] == (
        "skipped",
        "no nvcc on PATH or in CUDA_HOME: nothing here compiles CUDA extensions",
    )


@pytest.mark.parametrize(("version", "outcome"), [(None, "failed"), (0, "failed"), (1, "passed")])
def test_cudnn_version_from_one_up(version, outcome):
    spec, facts = node("h100")
    facts.data["software"]["torch"]["cudnn_version"] = version
    got, message, _ = decide(stack.test_cudnn_present, facts, spec)
    assert got == outcome
    if outcome == "failed":
        assert message.startswith(
            f"torch reports no cuDNN (cudnn.version() = {version!r}): a broken install"
        )


def test_nccl_present_or_not():
    spec, facts = node("h100")
    assert decide(stack.test_nccl_present, facts, spec)[0] == "passed"
    facts.data["software"]["torch"]["nccl_version"] = None
    assert decide(stack.test_nccl_present, facts, spec)[1].startswith(
        "torch reports no NCCL (version None): DDP and FSDP cannot run on this machine"
    )


def test_flash_attn_each_state():
    spec, facts = node("h100")
    fa = facts.data["software"]["flash_attn"]
    assert decide(stack.test_flash_attn_imports, facts, spec)[0] == "passed"
    assert decide(stack.test_flash_attn_forward_runs, facts, spec)[0] == "passed"
    fa.update(installed=False, import_error=None)
    assert decide(stack.test_flash_attn_imports, facts, spec)[1].startswith(
        "flash-attn is not installed; h100 is expected to run it. Install it built against this "
        "torch: pip install flash-attn --no-build-isolation (needs nvcc matching torch's CUDA)."
    )
    assert decide(stack.test_flash_attn_forward_runs, facts, spec)[:2] == (
        "failed",
        "cannot run: flash-attn does not import (see test_flash_attn_imports)",
    )
    fa.update(installed=True, import_error="undefined symbol: _ZN3c10", error_kind="abi_mismatch")
    assert decide(stack.test_flash_attn_imports, facts, spec)[1].startswith(
        "flash-attn ABI mismatch: it was built against another torch or CUDA (undefined symbol: "
        "_ZN3c10). Rebuild it against this torch: pip install --force-reinstall "
        "--no-build-isolation flash-attn."
    )
    fa.update(import_error="No module named 'flash_attn_2_cuda'", error_kind="other")
    assert decide(stack.test_flash_attn_imports, facts, spec)[1].startswith(
        "flash-attn is installed but does not import: No module named 'flash_attn_2_cuda'"
    )
    fa.update(import_error=None)
    facts.data["smoke"]["flash_attn_forward"] = {"ran": True, "ok": False, "max_abs_err": 0.5}
    assert decide(stack.test_flash_attn_forward_runs, facts, spec)[1].startswith(
        "flash-attn's forward pass ran wrong or did not run: {'ran': True, 'ok': False, "
        "'max_abs_err': 0.5}. Rebuild flash-attn for this GPU's architecture."
    )


def test_flash_attn_not_expected_skips():
    spec, facts = node("t4")
    for check in (stack.test_flash_attn_imports, stack.test_flash_attn_forward_runs):
        outcome, message, _ = decide(check, facts, spec)
        assert outcome == "skipped" and "flash" in message, message


# ---- precision: bf16, fp8, compute capability, smoke results ----


@pytest.mark.parametrize(
    ("cc", "outcome"), [("7.5", "failed"), ("8.0", "passed"), ("10.0", "passed")]
)
def test_bf16_native_from_compute_capability_8(cc, outcome):
    spec, facts = node("h100", gpus=2)
    facts.devices[1]["compute_capability"] = cc
    got, message, _ = decide(precision.test_bf16_native, facts, spec, facts.devices)
    assert got == outcome
    if outcome == "failed":
        assert message.startswith(
            "bf16 is not native (needs compute capability >= 8.0): "
            f"{label(facts.devices[1])}: compute capability 7.5"
        ), message


def test_bf16_native_skips_where_the_class_has_none():
    spec, facts = node("t4")
    assert decide(precision.test_bf16_native, facts, spec, facts.devices)[:2] == (
        "skipped",
        f"{spec.title} has no native bf16: bf16 runs emulated (slowly); use fp16",
    )
    spec, facts = node("mi300x")
    assert decide(precision.test_bf16_native, facts, spec, facts.devices)[:2] == (
        "skipped",
        "only for cuda classes; mi300x is rocm",
    )


def test_smoke_results_one_per_gpu_torch_sees():
    _, facts = node("h100", gpus=2)
    assert precision.smoke_runs(facts, "smoke.bf16_matmul") == range(2)
    facts.data["software"]["torch"]["device_count"] = 3
    assert decide(precision.smoke_runs, facts, "smoke.bf16_matmul")[:2] == (
        "failed",
        "smoke.bf16_matmul holds 2 results for the 3 GPUs torch sees: the smoke test did not run "
        "on every GPU. Record the facts again (`rigcheck facts -o FILE`); if it recurs, run "
        "`python -m rigcheck.facts.host.torch_probe` and read why it stopped.",
    )


@pytest.mark.parametrize(
    ("name", "path"),
    [("cpu", ("cpu_bf16_matmul",)), ("m4pro", ("mps", "bf16_matmul")), ("h100", None)],
)
def test_bf16_matmul_on_each_backend(name, path):
    spec, facts = node(name, gpus=2 if name == "h100" else None)
    assert decide(precision.test_bf16_matmul_runs, facts, spec)[0] == "passed"
    smoke = facts.data["smoke"]
    if path is None:
        result, where = smoke["bf16_matmul"][1], "cuda:1 (0000:2a:00.0)"
    else:
        result = smoke[path[0]] if len(path) == 1 else smoke[path[0]][path[1]]
        where = spec.backend
    result["ok"] = False
    assert decide(precision.test_bf16_matmul_runs, facts, spec)[:2] == (
        "failed",
        f"a bf16 matmul did not run or gave a wrong answer: {[f'{where}: {result}']}",
    )


def test_compute_capability_by_prefix_and_gcn_arch_on_rocm():
    spec, facts = node("h100", gpus=2)
    facts.devices[1]["compute_capability"] = "8.9"
    assert decide(precision.test_compute_capability, facts, spec, facts.devices)[:2] == (
        "failed",
        f"expected compute capability 9.0, found {label(facts.devices[1])}: 8.9",
    )
    facts.devices[1]["compute_capability"] = "9.0"
    assert decide(precision.test_compute_capability, facts, spec, facts.devices)[0] == "passed"
    spec, facts = node("mi300x")
    facts.devices[0]["compute_capability"] = "9.4"  # ROCm: the gfx architecture decides
    assert decide(precision.test_compute_capability, facts, spec, facts.devices)[0] == "passed"
    facts.devices[0]["gcn_arch"] = "gfx90a"
    assert decide(precision.test_compute_capability, facts, spec, facts.devices)[0] == "failed"


def test_fp8_each_result_and_a_class_without_fp8():
    spec, facts = node("h100", gpus=2)
    assert decide(precision.test_fp8_matmul_runs, facts, spec, facts.devices)[0] == "passed"
    facts.data["smoke"]["fp8_matmul"][0] = {"ran": True, "ok": False}
    assert decide(precision.test_fp8_matmul_runs, facts, spec, facts.devices)[:2] == (
        "failed",
        "an fp8 (e4m3) torch._scaled_mm did not run or gave a wrong answer: "
        f"{['cuda:0 (0000:18:00.0): ' + str({'ran': True, 'ok': False})]}. fp8 needs compute "
        "capability >= 8.9 and a torch built with CUDA >= 12.1.",
    )
    spec, facts = node("a100")
    assert decide(precision.test_fp8_matmul_runs, facts, spec, facts.devices)[:2] == (
        "skipped",
        f"{spec.title} has no fp8 tensor cores",
    )


# ---- identity: product, count, name, memory ----


def test_identity_messages():
    spec, facts = node("h100", gpus=2)
    assert decide(identity.test_product_matches_class, facts, spec)[0] == "passed"
    facts.devices[1]["pci"]["device_id"] = "0x20b0"
    outcome, message, _ = decide(identity.test_product_matches_class, facts, spec)
    assert outcome == "failed"
    # pytest indents the lines of a multi-line assert message: compare them one by one
    lines = [line.strip() for line in message.splitlines()]
    assert lines[0] == "this machine is not a h100:", message
    assert lines[1].startswith("GPU 1: expected NVIDIA H100 SXM5 80GB (HBM3) (PCI 0x2330), found")
    assert lines[2:] == ["Run `rigcheck detect` to see which class it is."], message
    facts.devices[1]["pci"]["device_id"] = 16
    assert decide(identity.test_product_matches_class, facts, spec)[1].startswith(
        "cannot judge: pci.device_id of GPU 1"
    )
    spec, facts = node("cpu")
    assert decide(identity.test_product_matches_class, facts, spec)[0] == "passed"


def test_device_count_lists_what_it_found():
    spec, facts = node("h100", gpus=2)
    assert decide(identity.test_device_count, facts, spec, 2)[0] == "passed"
    outcome, message, _ = decide(identity.test_device_count, facts, spec, 4)
    assert outcome == "failed"
    assert message.startswith(
        f"expected 4 accelerator(s) for h100, found 2: {label(facts.devices[0])} "
    ), message
    assert "A healthy h100 node has 1, 2, 4, 8 (the spec's gpu_count.allowed)." in message
    spec, facts = node("cpu")
    assert decide(identity.test_device_count, facts, spec, 1)[1].startswith(
        "expected 1 accelerator(s) for cpu, found 0: none."
    )


def test_device_name_against_the_pattern():
    spec, facts = node("h100", gpus=2)
    assert decide(identity.test_device_name_matches, facts.devices, spec)[0] == "passed"
    facts.devices[1]["name"] = "NVIDIA H100 PCIe"
    pattern = spec.identity["name_pattern"]
    assert decide(identity.test_device_name_matches, facts.devices, spec)[1].startswith(
        f"device name does not match {pattern!r} although the PCI id does: "
        f"{label(facts.devices[1])}: 'NVIDIA H100 PCIe'. A renamed SKU"
    )
    assert decide(identity.test_device_name_matches, [], spec)[:2] == (
        "skipped",
        "h100 has no device name to match",
    )


def test_host_memory_of_the_cpu_class_at_and_below_its_floor():
    spec, facts = node("cpu")
    floor = spec.expect("memory_per_device")["floor"]["value"]
    facts.data["host"]["memory_total_bytes"] = int(floor * GIB) - GIB // 2
    outcome, message, _ = decide(identity.test_memory_per_device, facts, spec, [])
    assert outcome == "failed"
    assert message.startswith(
        f"memory below the cpu floor of {floor} GiB: GPU host: {floor - 0.5:.1f} GiB. A smaller"
    ), message


# ---- kernel log: Xid faults and application Xids ----


def xids(*events) -> tuple[Spec, Facts]:
    spec, facts = node("h100", gpus=2)
    facts.data["kernel_log"]["xid_events"] = [
        {"t_s": 1.0, "bus_id": bus, "code": code, "pid": None, "text": ""} for code, bus in events
    ]
    return spec, facts


def test_a_fault_xid_is_named_with_its_gpu_meaning_and_action():
    spec, facts = xids((79, "0000:2A:00.0"), (79, "0000:2a:00.0"), (31, "0000:18:00.0"))
    outcome, message, warned = decide(
        kernel_log.test_no_machine_fault_xids, spec, facts, facts.devices
    )
    x79, x31 = lookup(79), lookup(31)
    assert outcome == "failed"
    assert message.startswith(
        "the kernel log (journalctl -k -b, since boot) has GPU fault events: Xid 79 x2 on "
        f"{label(facts.devices[1])}: {x79.meaning} ({x79.cause} fault). To do: {x79.action}. "
        f"Also seen, no machine fault and not judged: Xid 31 x1 on "
        f"{label(facts.devices[0])} (application). Meanings: {SOURCE}."
    ), message
    assert warned == ["UserWarning"]
    assert x31.cause == "application"


def test_application_xids_alone_pass_with_a_warning_and_the_window_is_named():
    spec, facts = xids((31, "0000:18:00.0"))
    with pytest.warns(UserWarning) as caught:
        kernel_log.test_no_machine_fault_xids(spec, facts, facts.devices)
    assert str(caught[0].message) == (
        f"Xid events that are no machine fault: Xid 31 x1 on {label(facts.devices[0])} "
        "(application)"
    )
    spec, facts = xids((48, "0000:db:00.0"))
    facts.data["kernel_log"]["window_s"] = 3600
    outcome, message, warned = decide(
        kernel_log.test_no_machine_fault_xids, spec, facts, facts.devices
    )
    assert (outcome, warned) == ("failed", [])
    assert message.startswith(
        "the kernel log (journalctl -k -b, in the last 3600 s) has GPU fault events: Xid 48 x1 on "
        "PCI 0000:db:00.0 (no GPU NVML sees): "
    ), message
    assert "Also seen" not in message
    spec, facts = xids()
    assert decide(kernel_log.test_no_machine_fault_xids, spec, facts, facts.devices)[:3] == (
        "passed",
        "",
        [],
    )


# ---- Apple ----


@pytest.mark.parametrize(
    ("check", "path", "message"),
    [
        ("test_mps_built", ("software", "torch", "mps_built"),
         "this torch was built without MPS: install the macOS arm64 wheel of torch"),
        ("test_mps_available", ("software", "torch", "mps_available"),
         "MPS is built but not available: needs macOS 12.3+ on Apple silicon, and a native "
         "arm64 Python (not one running under Rosetta)"),
        ("test_mps_roundtrip", ("smoke", "mps", "roundtrip", "ok"),
         "a tensor sent to MPS and back came back wrong: "),
        ("test_mps_autocast_fp16", ("smoke", "mps", "autocast_fp16", "ok"),
         'torch.autocast("mps", dtype=torch.float16) did not produce fp16: '),
    ],
)  # fmt: skip
def test_apple_checks_true_passes_false_fails(check, path, message):
    _, facts = node("m4pro")
    assert decide(getattr(apple, check), facts)[0] == "passed"
    *parents, last = path
    where = facts.data
    for part in parents:
        where = where[part]
    where[last] = False
    outcome, got, _ = decide(getattr(apple, check), facts)
    assert outcome == "failed" and got.startswith(message), got


@pytest.mark.parametrize(
    ("behaviour", "outcome"),
    [("rejected", "passed"), ("supported", "passed"), ("wrong_result", "failed")],
)
def test_mps_float64_member_by_member(behaviour, outcome):
    _, facts = node("m4pro")
    facts.data["smoke"]["mps"]["float64"]["behaviour"] = behaviour
    got, message, _ = decide(apple.test_mps_float64_is_refused_cleanly, facts)
    assert got == outcome
    if outcome == "failed":
        assert message.startswith(
            "float64 on MPS gave a wrong result instead of an error: {'behaviour': "
        ), message


# ---- what the sampled mutation run found unasserted ----


def failure_of(check, *args) -> pytest.fail.Exception:
    with pytest.raises(pytest.fail.Exception) as caught:
        check(*args)
    return caught.value


def test_cannot_judge_failures_show_no_traceback():
    spec, facts = with_versions("14.0")
    assert failure_of(stack.test_driver_supports_torch_cuda, facts, spec).pytrace is False
    spec, facts = with_versions(None)
    assert failure_of(stack.test_driver_supports_torch_cuda, facts, spec).pytrace is False


@pytest.mark.parametrize("name", ["h100", "a100", "l40s", "t4", "v100", "rtx4090", "b200"])
def test_class_driver_minimum_at_and_just_below(name):
    spec, facts = node(name)
    minimum = spec.expected_value("min_driver")
    facts.data["software"]["nvidia_driver"]["version"] = minimum
    assert decide(stack.test_driver_meets_class_minimum, facts, spec)[0] == "passed"
    parts = minimum.split(".")
    below = ".".join([*parts[:-1], str(int(parts[-1]) - 1).zfill(len(parts[-1]))])
    facts.data["software"]["nvidia_driver"]["version"] = below
    assert decide(stack.test_driver_meets_class_minimum, facts, spec)[:2] == (
        "failed",
        f"driver {below} is older than {minimum}, the first that supports {spec.title} "
        f"({spec.expect('min_driver')['source']}). Upgrade the NVIDIA driver.",
    )


def test_two_fault_groups_and_two_wrong_architectures_are_listed_apart():
    spec, facts = xids((79, "0000:18:00.0"), (48, "0000:2a:00.0"))
    message = decide(kernel_log.test_no_machine_fault_xids, spec, facts, facts.devices)[1]
    assert f"To do: {lookup(79).action} | Xid 48 x1 on {label(facts.devices[1])}: " in message
    spec, facts = node("h100", gpus=2)
    for d in facts.devices:
        d["compute_capability"] = "8.0"
    assert decide(precision.test_compute_capability, facts, spec, facts.devices)[1] == (
        f"expected compute capability 9.0, found {label(facts.devices[0])}: 8.0; "
        f"{label(facts.devices[1])}: 8.0"
    )


def test_identity_lists_each_wrong_gpu_and_a_pci_not_supported():
    spec, facts = node("h100", gpus=2)
    for d in facts.devices:
        d["pci"]["device_id"] = "0x20b0"
    lines = decide(identity.test_product_matches_class, facts, spec)[1].splitlines()
    assert [line.split(":")[0].strip() for line in lines[1:3]] == ["GPU 0", "GPU 1"], lines
    facts.devices[1]["pci"] = None
    assert decide(identity.test_product_matches_class, facts, spec)[1] == (
        "cannot judge: pci.device_id of GPU 1: pci is not supported by this device or driver "
        "(NVML: Not Supported), as in a vGPU guest. This class needs it: run on bare metal or GPU "
        "passthrough, or upgrade the driver."
    )


def test_device_count_message_in_full():
    spec, facts = node("h100", gpus=2)
    listing = ", ".join(f"{label(d)} {identity.describe_device(d)}" for d in facts.devices)
    assert decide(identity.test_device_count, facts, spec, 4)[1] == (
        f"expected 4 accelerator(s) for h100, found 2: {listing}. A healthy h100 node has 1, 2, "
        "4, 8 (the spec's gpu_count.allowed). A GPU missing: check `nvidia-smi -L` and the "
        "kernel log (`dmesg | grep -i xid`) for one that fell off the bus. A different node "
        "size: pass --gpus N."
    )


@pytest.mark.parametrize("name", ["h100", "a100_40gb", "mi300x", "l40s"])
def test_gpu_memory_at_and_below_the_floor_on_each_device(name):
    spec, facts = node(name, gpus=3)
    floor = spec.expect("memory_per_device")["floor"]["value"]
    totals = [int(floor * GIB) + 1, int(floor * GIB) - GIB // 2, int(floor * GIB) - GIB]
    for d, total in zip(facts.devices, totals, strict=False):
        d["memory_total_bytes"] = total
    short = [
        f"{label(d)}: {d['memory_total_bytes'] / GIB:.1f} GiB"
        for d in facts.devices
        if d["memory_total_bytes"] < floor * GIB
    ]
    outcome, message, _ = decide(identity.test_memory_per_device, facts, spec, facts.devices)
    assert (outcome, message) == (
        "failed",
        f"memory below the {name} floor of {floor} GiB: {'; '.join(short)}. A smaller SKU (e.g. "
        "40GB instead of 80GB), or memory hidden by MIG or a vGPU profile.",
    )
