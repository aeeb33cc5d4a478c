"""What ROCm torch must find in the environment before it starts, for a figure to mean what
the spec says.

TF32 on MI300X: ROCm builds of torch take the TF32 (xf32) hipBLASLt path for
float32_matmul_precision('high') only when HIPBLASLT_ALLOW_TF32=1 is set, and they read it
once, on the first float32 matmul (aten Context::allowTF32CuBLAS caches it in a static; see
pytorch/pytorch#130600 and the ROCm/pytorch#1803 notes). Without it the tf32 check times
the fp32 path and a healthy MI300X fails its tf32 floor at a quarter of the rate. The perf
plugin sets it in its pytest_configure, before any probe imports torch; a value the user set
is kept (HIPBLASLT_ALLOW_TF32=0 is a choice, and the tf32 measurement then records that TF32
was not in effect). Harmless elsewhere: only hipBLASLt reads it, and fp32 checks run at
'highest' precision, where TF32 is off whatever the variable says.
"""

from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping
from types import ModuleType

TF32_VARIABLE = "HIPBLASLT_ALLOW_TF32"


def prepare_rocm_tf32(
    environ: MutableMapping[str, str] | None = None,
    modules: dict[str, ModuleType] | None = None,
) -> str:
    """Set HIPBLASLT_ALLOW_TF32=1 unless set; say what was done, for the session's record."""
    environ = os.environ if environ is None else environ
    modules = sys.modules if modules is None else modules
    if TF32_VARIABLE in environ:
        return f"{TF32_VARIABLE}={environ[TF32_VARIABLE]} (set before rigcheck started; kept)"
    environ[TF32_VARIABLE] = "1"
    if "torch" in modules:
        # Still in time unless a float32 matmul already ran; the measurement checks.
        return f"{TF32_VARIABLE}=1 set after torch was imported, before any rigcheck matmul"
    return f"{TF32_VARIABLE}=1 set before torch started"
