"""ROCm versions on the host, and AMD's rule for which of them work together.

Facts (each a value, None where the thing is not installed, or an error record):
  kernel_driver  the amdgpu kernel driver's version: /sys/module/amdgpu/version (the
                 amdgpu-dkms package writes it), else amdsmi's driver info (the in-tree driver
                 reports the kernel's version there)
  installed      the ROCm release installed on the host: /opt/rocm/.info/version ("6.2.0-66")
  hsa_runtime    the HSA runtime (ROCr) library's version, from its file name in /opt/rocm/lib
  amdsmi_lib     libamd_smi's version, as amdsmi reports it
torch's own HIP version is software.torch.hip_version (torch.version.hip).

The rule (ROCm documentation, "User and kernel-space support matrix",
rocm.docs.amd.com/projects/install-on-linux/en/docs-6.3.0/reference/user-kernel-space-compat-matrix.html):
"ROCm provides forward and backward compatibility between the AMD Kernel-mode GPU Driver (KMD)
and its user space software for +/- 2 releases". Its table: KMD 5.7.x is tested with user space
5.5.x-6.1.x, KMD 6.2.x with 6.0.x-6.3.x. A torch wheel built for ROCm 6.2 brings its own user
space (HIP, rocBLAS... in torch/lib), so what it needs from the host is a kernel driver within two
releases of 6.2: a ROCm 5.7 host (three releases back) is outside the window. The host's kernel
driver is installed with its ROCm release (amdgpu-install), so the installed release stands for
the KMD's; the driver's own version is recorded beside it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from rigcheck.facts.probe import error_record

# ROCm releases in order, major.minor; "two releases" counts steps along this list
# (5.7 -> 6.0 is one step). A release not listed cannot be placed: add it when AMD ships it.
RELEASES = (
    "5.0", "5.1", "5.2", "5.3", "5.4", "5.5", "5.6", "5.7",
    "6.0", "6.1", "6.2", "6.3", "6.4",
    "7.0", "7.1", "7.2",
)  # fmt: skip
WINDOW = 2  # +/- 2 releases between the KMD and user space (AMD's support matrix)
ROCM = Path("/opt/rocm")
AMDGPU_MODULE = Path("/sys/module/amdgpu/version")


def release_of(version: str | None) -> str | None:
    """'6.2.41133-dd7f95766' or '6.2.0-66' -> '6.2'; None when it is not a version."""
    match = re.match(r"^(\d+)\.(\d+)", version or "")
    return f"{int(match[1])}.{int(match[2])}" if match else None


def releases_apart(a: str, b: str) -> int | None:
    """Steps between two ROCm releases on AMD's release list; None if either is not on it."""
    if a not in RELEASES or b not in RELEASES:
        return None
    return abs(RELEASES.index(a) - RELEASES.index(b))


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
