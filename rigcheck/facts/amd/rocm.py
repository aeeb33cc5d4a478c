"""ROCm versions on the host, and AMD's rule for which of them work together.

Facts (each a value, None where the thing is not installed, or an error record):
  kernel_driver  the amdgpu kernel driver's version: /sys/module/amdgpu/version (the
                 amdgpu-dkms package writes it), else amdsmi's driver info (the in-tree driver
                 reports the kernel's version there)
  installed      the ROCm release installed on the host: /opt/rocm/.info/version ("6.2.0-66")
  hsa_runtime    the HSA runtime (ROCr) library's version, from its file name in /opt/rocm/lib
  amdsmi_lib     libamd_smi's version, as amdsmi reports it
torch's own HIP version is software.torch.hip_version (torch.version.hip).

The rule is AMD's "User and AMD GPU Driver (amdgpu) support matrix" (MATRIX_SOURCE): which
user-space releases AMD supports with each kernel driver. From ROCm 6.4.0 the driver and user
space are supported up to a year apart (KMD 6.1.x with user space 5.7.x to 6.4.x); before it,
+/- 2 releases. A torch wheel built for ROCm 6.2 brings its own user space (HIP, rocBLAS... in
torch/lib), so what it needs from the host is a kernel driver whose row lists 6.2. The driver's
release is its own where it has one (amdgpu 30.10 and later, distributed apart from ROCm);
older drivers were installed with their ROCm release (amdgpu-install), so the installed release
stands for theirs. A driver the matrix does not list cannot be judged: the check says so.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from rigcheck.facts.probe import error_record

MATRIX_SOURCE = (
    "AMD's 'User and AMD GPU Driver (amdgpu) support matrix' (rocm.docs.amd.com/projects/"
    "install-on-linux/en/latest/reference/user-kernel-space-compat-matrix.html), as "
    "ROCm/rocm-install-on-linux docs/reference/user-kernel-space-compat-matrix.rst has it at "
    "commit 0802f80: newest row amdgpu 30.10, user space up to ROCm 7.0"
)
# Kernel driver release -> the user-space (ROCm) releases AMD supports with it (MATRIX_SOURCE).
SUPPORT_MATRIX = {
    "30.10": ("6.2", "6.3", "6.4", "7.0"),
    "6.4": ("6.1", "6.2", "6.3", "6.4", "7.0"),
    "6.3": ("6.1", "6.2", "6.3", "6.4", "7.0"),
    "6.2": ("6.0", "6.1", "6.2", "6.3", "6.4", "7.0"),
    "6.1": ("5.7", "6.0", "6.1", "6.2", "6.3", "6.4"),
    "6.0": ("5.6", "5.7", "6.0", "6.1", "6.2"),
    "5.7": ("5.5", "5.6", "5.7", "6.0", "6.1"),
    "5.6": ("5.4", "5.5", "5.6", "5.7", "6.0"),
    "5.5": ("5.3", "5.4", "5.5", "5.6", "5.7"),
    "5.4": ("5.2", "5.3", "5.4", "5.5", "5.6"),
    "5.3": ("5.1", "5.2", "5.3", "5.4", "5.5"),
}
# The amdgpu driver distributed apart from ROCm (30.10 the first) reports its own version.
OWN_DRIVER_VERSION = re.compile(r"^(3\d)\.(\d+)")
# From ROCm 7.0, amdgpu-install installs the separately versioned driver, whose module may still
# report its DKMS version (6.14.x): the ROCm release names the driver's row. ROCm/amdgpu-docs
# docs/compatibility/compatibility-matrix.rst: "The AMD GPU Driver (amdgpu) 30.10 is compatible
# with ROCm 7.0.x, 6.4.x, ..."; 30.10 is the driver released with ROCm 7.0.
DRIVER_INSTALLED_WITH = {"7.0": "30.10"}
ROCM = Path("/opt/rocm")
AMDGPU_MODULE = Path("/sys/module/amdgpu/version")


def release_of(version: str | None) -> str | None:
    """'6.2.41133-dd7f95766' or '6.2.0-66' -> '6.2'; None when it is not a version."""
    match = re.match(r"^(\d+)\.(\d+)", version or "")
    return f"{int(match[1])}.{int(match[2])}" if match else None


def driver_release(kernel_driver: Any, installed: Any) -> str | None:
    """The kernel driver's row in SUPPORT_MATRIX: its own release (amdgpu 30.10 and later),
    else the ROCm release installed with it; None when neither is known."""
    own = OWN_DRIVER_VERSION.match(kernel_driver) if isinstance(kernel_driver, str) else None
    if own:
        return f"{int(own[1])}.{int(own[2])}"
    release = release_of(installed) if isinstance(installed, str) else None
    return DRIVER_INSTALLED_WITH.get(release, release)


def supported_user_space(driver: str) -> tuple[str, ...] | None:
    """The user-space releases AMD supports with this driver; None if the matrix lacks it."""
    return SUPPORT_MATRIX.get(driver)


def probe_rocm(driver_from_amdsmi: Any = None, amdsmi_lib: Any = None, root: Path = ROCM,
               module: Path = AMDGPU_MODULE) -> dict[str, Any]:  # fmt: skip
    return {
        "kernel_driver": _kernel_driver(module, driver_from_amdsmi),
        "installed": _installed(root),
        "hsa_runtime": _hsa_runtime(root),
        "amdsmi_lib": amdsmi_lib,
    }


def _kernel_driver(module: Path, from_amdsmi: Any) -> Any:
    try:
        return module.read_text().strip()
    except FileNotFoundError:
        pass  # the in-tree amdgpu has no version file: amdsmi's answer is the kernel's
    except OSError as exc:
        return error_record(f"{module}: {type(exc).__name__}: {exc}")
    if isinstance(from_amdsmi, dict) and "version" in from_amdsmi:
        return from_amdsmi["version"]
    if isinstance(from_amdsmi, dict) and "error" in from_amdsmi:
        return error_record(f"no {module}, and amdsmi: {from_amdsmi['error']}")
    return error_record(f"no {module} (amdgpu not loaded?) and no driver info from amdsmi")


def _installed(root: Path) -> Any:
    info = root / ".info" / "version"
    try:
        text = info.read_text().strip()
    except FileNotFoundError:
        return None  # no ROCm on the host: a torch wheel runs on its bundled user space
    except OSError as exc:
        return error_record(f"{info}: {type(exc).__name__}: {exc}")
    return text or error_record(f"{info} is empty")


def _hsa_runtime(root: Path) -> Any:
    """libhsa-runtime64.so.1.14.60200 -> '1.14.60200'; None without ROCm on the host."""
    lib = root / "lib"
    try:
        names = sorted(p.name for p in lib.glob("libhsa-runtime64.so.*"))
    except OSError as exc:
        return error_record(f"{lib}: {type(exc).__name__}: {exc}")
    versions = [n.split(".so.", 1)[1] for n in names if n.count(".") >= 4]
    return max(versions, key=lambda v: [int(p) for p in v.split(".") if p.isdigit()]) \
        if versions else None  # fmt: skip
