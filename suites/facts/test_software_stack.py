"""Does the software stack fit together: torch, driver, nvcc, cuDNN, NCCL, flash-attn."""

import warnings

import pytest

from rigcheck.require import expected, fact, needs_backend, version_tuple

pytestmark = pytest.mark.facts

# The oldest Linux driver each CUDA major release runs on: below it, nothing built with that CUDA
# starts. NVIDIA's CUDA Compatibility guide, "Minor Version Compatibility", Table 1
# (docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html, release r575 and
# later: CUDA 13.x >= 580, 12.x >= 525, 11.x >= 450, the 11.x floor being 450.80.02); the
# exact builds are the CUDA Toolkit release notes' minimum drivers for minor version
# compatibility (docs.nvidia.com/cuda/cuda-toolkit-release-notes, "CUDA Driver" table).
MIN_DRIVER_FOR_CUDA_MAJOR = {11: "450.80.02", 12: "525.60.13", 13: "580.65.06"}
# Before CUDA 11 there was no minor-version compatibility: each minor release needs its own
# driver. The same release notes' table, "CUDA Toolkit and Corresponding Driver Versions"
# (Linux x86_64): 10.2.89 >= 440.33, 10.1.105 >= 418.39, 10.0.130 >= 410.48, 9.2.88 >= 396.26,
# 9.1.85 >= 390.46, 9.0.76 >= 384.81: back to the oldest driver a class allows (v100: 384.81).
MIN_DRIVER_FOR_CUDA_MINOR = {(10, 2): "440.33", (10, 1): "418.39", (10, 0): "410.48",
                             (9, 2): "396.26", (9, 1): "390.46", (9, 0): "384.81"}  # fmt: skip


def min_driver_for_cuda(version: str) -> str | None:
    """The oldest driver that runs code built with this CUDA; None where rigcheck has no row."""
    major, minor = ((*version_tuple(version), 0))[:2]
    return MIN_DRIVER_FOR_CUDA_MAJOR.get(major) or MIN_DRIVER_FOR_CUDA_MINOR.get((major, minor))


class DriverOlderThanTorchCuda(UserWarning):
    """The driver's CUDA is an older minor than torch's: works, without PTX JIT."""


BUILD_FOR_BACKEND = {"cuda": "cuda", "rocm": "rocm", "mps": "cpu"}


def test_torch_imports(facts):
    """torch imported in the probe's own process and reported a version string."""
    fact(facts, "software.torch")
    fact(facts, "software.torch.version")


def test_torch_build_matches_class(facts, spec):
    needs_backend(spec, "cuda", "rocm", "mps")
    build = fact(facts, "software.torch.build")
    version = fact(facts, "software.torch.version")
    want = BUILD_FOR_BACKEND[spec.backend]
    assert build == want, (
        f"torch {version} is a {build} build; {spec.name} needs a {want} build of torch. "
        f"Install the torch wheel built for {spec.backend.upper()} that matches the driver."
    )


def test_torch_sees_all_devices(facts, spec, devices):
    needs_backend(spec, "cuda", "rocm")
    seen = fact(facts, "software.torch.device_count")
    available = fact(facts, "software.torch.cuda_available")
    assert available is True and seen == len(devices), (
        f"the driver shows {len(devices)} GPU(s) but torch sees {seen} "
        f"(torch.cuda.is_available() = {available}). Check CUDA_VISIBLE_DEVICES, "
        "the container's --gpus flag, and that torch's CUDA is not newer than the driver."
    )


def test_driver_supports_torch_cuda(facts, spec):
    needs_backend(spec, "cuda")
    torch_cuda = fact(facts, "software.torch.cuda_version")
    if torch_cuda is None:
        pytest.fail("torch has no CUDA version: it is not a CUDA build", pytrace=False)
    driver = fact(facts, "software.nvidia_driver.version")
    major = version_tuple(torch_cuda)[0]
    minimum = min_driver_for_cuda(torch_cuda)
    if minimum is None:
        pytest.fail(
            f"rigcheck does not know the oldest driver for CUDA {major}.x (torch's CUDA "
            f"{torch_cuda}): add it to MIN_DRIVER_FOR_CUDA_MAJOR from the CUDA release notes",
            pytrace=False,
        )
    needs = f"CUDA {major}.x" if major >= 11 else f"CUDA {torch_cuda}"
    assert version_tuple(driver) >= version_tuple(minimum), (
        f"driver {driver} is too old for torch's CUDA {torch_cuda}: {needs} needs "
        f"driver >= {minimum}. Upgrade the driver, or install a torch built for an older CUDA."
    )


def test_driver_cuda_not_older_than_torch_cuda(facts, spec):
    """An older major cannot run torch at all; an older minor runs by minor-version
    compatibility, without PTX JIT: a warning, not a failure."""
    needs_backend(spec, "cuda")
    torch_cuda = fact(facts, "software.torch.cuda_version")
    driver_cuda = fact(facts, "software.nvidia_driver.cuda_driver_version")
    if torch_cuda is None:
        pytest.fail("torch has no CUDA version: it is not a CUDA build", pytrace=False)
    driver, built = version_tuple(driver_cuda)[:2], version_tuple(torch_cuda)[:2]
    if driver[0] == built[0] and driver < built:
        warnings.warn(
            f"the driver supports CUDA up to {driver_cuda}, torch was built with CUDA "
            f"{torch_cuda}: it runs by minor-version compatibility, but kernels JIT-compiled "
            "from PTX (a GPU newer than torch's arch list, some triton paths) fail. "
            "Upgrade the driver to remove the risk.",
            DriverOlderThanTorchCuda,
            stacklevel=1,
        )
    assert driver[0] >= built[0], (
        f"the driver supports CUDA up to {driver_cuda}, torch was built with CUDA {torch_cuda}: "
        "torch cannot initialise CUDA. Upgrade the driver or use a torch built for CUDA "
        f"{driver[0]}.x."
    )


def test_driver_meets_class_minimum(facts, spec):
    minimum = expected(spec, "min_driver")
    driver = fact(facts, "software.nvidia_driver.version")
    assert version_tuple(driver) >= version_tuple(minimum), (
        f"driver {driver} is older than {minimum}, the first that supports {spec.title} "
        f"({spec.expect('min_driver')['source']}). Upgrade the NVIDIA driver."
    )


class NvccMinorMismatch(UserWarning):
    """nvcc is another minor release of torch's CUDA major: extensions build, with a warning."""


def test_nvcc_matches_torch_cuda(facts, spec):
    """Extensions such as flash-attn compile with nvcc against torch's CUDA headers.

    torch.utils.cpp_extension._check_cuda_version (torch 2.13) raises only when the CUDA
    *major* differs ("The detected CUDA version (%s) mismatches ...") and logs
    CUDA_MISMATCH_WARN for a minor one ("Most likely this shouldn't be a problem"): nvcc 12.4
    with a torch built for 12.8 builds flash-attn. The same rule here: a major mismatch fails,
    a minor one passes with a warning.
    """
    needs_backend(spec, "cuda")
    if fact(facts, "software.nvcc") is None:
        pytest.skip("no nvcc on PATH or in CUDA_HOME: nothing here compiles CUDA extensions")
    torch_cuda = fact(facts, "software.torch.cuda_version")
    if torch_cuda is None:
        pytest.fail("torch has no CUDA version: it is not a CUDA build", pytrace=False)
    nvcc, path = fact(facts, "software.nvcc.version"), fact(facts, "software.nvcc.path")
    mine, theirs = version_tuple(nvcc)[:2], version_tuple(torch_cuda)[:2]
    if mine[0] == theirs[0] and mine != theirs:
        warnings.warn(
            f"nvcc at {path} is CUDA {nvcc}, torch was built with CUDA {torch_cuda}: a minor "
            "mismatch, which torch's cpp_extension accepts with a warning. Extensions build; "
            "a matching toolkit removes the risk of a header difference.",
            NvccMinorMismatch,
            stacklevel=1,
        )
    assert mine[0] == theirs[0], (
        f"nvcc at {path} is CUDA {nvcc}, torch was built with CUDA {torch_cuda}: extensions "
        "(flash-attn, apex, xformers) built here fail to build (torch's cpp_extension refuses "
        "a CUDA major mismatch). Put a CUDA "
        f"{theirs[0]}.x toolkit first on PATH / in CUDA_HOME."
    )


def test_cudnn_present(facts, spec):
    expected(spec, "cudnn")
    version = fact(facts, "software.torch.cudnn_version")
    assert version is not None and version > 0, (
        f"torch reports no cuDNN (cudnn.version() = {version!r}): a broken install"
    )


def test_nccl_present(facts, spec):
    expected(spec, "nccl")
    version = fact(facts, "software.torch.nccl_version")
    assert version is not None, (
        f"torch reports no NCCL (version {version!r}): DDP and FSDP cannot run on this machine"
    )


def test_flash_attn_imports(facts, spec):
    if not expected(spec, "flash_attn"):
        pytest.skip(f"{spec.name} is not expected to run flash-attn")
    problem = flash_attn_problem(facts, spec)
    assert problem is None, problem


def test_flash_attn_forward_runs(facts, spec):
    if not expected(spec, "flash_attn"):
        pytest.skip(f"{spec.name} is not expected to run flash-attn")
    if flash_attn_problem(facts, spec):
        pytest.fail("cannot run: flash-attn does not import (see test_flash_attn_imports)")
    ok = fact(facts, "smoke.flash_attn_forward.ok")
    result = facts.find("smoke.flash_attn_forward")
    assert ok is True, (
        f"flash-attn's forward pass ran wrong or did not run: {result}. "
        "Rebuild flash-attn for this GPU's architecture."
    )


def flash_attn_problem(facts, spec) -> str | None:
    """What is wrong with the flash-attn install, in words a user can act on; None if fine."""
    fact(facts, "software.flash_attn")
    if fact(facts, "software.flash_attn.installed") is False:
        return (
            f"flash-attn is not installed; {spec.name} is expected to run it. Install it "
            "built against this torch: pip install flash-attn --no-build-isolation "
            "(needs nvcc matching torch's CUDA)."
        )
    error = fact(facts, "software.flash_attn.import_error")
    if error is not None and facts.find("software.flash_attn.error_kind") == "abi_mismatch":
        return (
            f"flash-attn ABI mismatch: it was built against another torch or CUDA ({error}). "
            "Rebuild it against this torch: pip install --force-reinstall --no-build-isolation "
            "flash-attn."
        )
    if error is not None:
        return f"flash-attn is installed but does not import: {error}"
    return None
