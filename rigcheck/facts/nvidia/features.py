"""NVML features that came with a later driver branch: absent from an older driver, which is not
the same as a GPU that cannot be read.

nvidia-ml-py binds every function of its own release; on a driver that does not export one the
call raises FunctionNotFound. For the features below that is a fact of the driver (like NVML's
Not Supported, stored as None), not an unreadable GPU: a check whose class does not need the
feature skips saying why, one whose class needs it still fails closed ("not supported by this
device or driver ... upgrade the driver").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# fact -> (the NVML symbol that reads it, the first driver branch that exports it, source)
FEATURES: dict[str, tuple[str, int, str]] = {
    "fabric": (
        "nvmlDeviceGetGpuFabricInfo",
        530,
        "first declared in the nvml.h of CUDA 12.1 (R530); Azure's ND A100 v4 on 460.32.03 "
        "answers FunctionNotFound (issue 35)",
    ),
    "remapped_rows": (
        "nvmlDeviceGetRemappedRows",
        450,
        "CUDA 11.0's nvml.h (R450), with A100's row remapping (NVIDIA, A100 GPU Memory Error "
        "Management: row remapping replaces page retirement from A100 on)",
    ),
    "mig": (
        "nvmlDeviceGetMigMode",
        450,
        "CUDA 11.0's nvml.h (R450), with A100's Multi-Instance GPU",
    ),
}


def exported(nvml, symbol: str) -> bool:
    """Whether the loaded libnvidia-ml exports `symbol` (pynvml looks each one up by name)."""
    try:
        nvml._nvmlGetFunctionPointer(symbol)
    except nvml.NVMLError_FunctionNotFound:
        return False
    return True


def read_feature(nvml, read: Callable[[Callable[[], Any]], Any], fact: str,
                 fn: Callable[[], Any]) -> Any:  # fmt: skip
    """`read(fn)`, or None where this driver predates the feature (as Not Supported reads)."""
    symbol = FEATURES[fact][0]
    return read(fn) if exported(nvml, symbol) else None
