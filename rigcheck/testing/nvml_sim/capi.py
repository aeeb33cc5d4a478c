"""What libnvidia-ml's C API looks like from below the binding: return codes, struct layouts,
and how a C function reads its arguments and writes through its pointer arguments.

Every layout here is written from NVIDIA's nvml.h, not from pynvml: the simulator writes the
bytes the real library writes, so a binding whose ctypes struct disagrees with nvml.h reads
what the real library would make it read. (nvml.h as vendored in NVIDIA/go-nvml, pkg/nvml/nvml.h,
and the R535 header; field comments name the header where they differ by generation.)
"""

from __future__ import annotations

import ctypes
from typing import Any

# nvmlReturn_t (nvml.h)
SUCCESS = 0
UNINITIALIZED = 1
INVALID_ARGUMENT = 2
NOT_SUPPORTED = 3
NO_PERMISSION = 4
NOT_FOUND = 6
INSUFFICIENT_SIZE = 7
FUNCTION_NOT_FOUND = 13
GPU_IS_LOST = 15
ARGUMENT_VERSION_MISMATCH = 25
UNKNOWN = 999
RETURN_CODES = {"SUCCESS": 0, "INVALID_ARGUMENT": 2, "NOT_SUPPORTED": 3, "NO_PERMISSION": 4,
                "NOT_FOUND": 6, "DRIVER_NOT_LOADED": 9, "TIMEOUT": 10, "GPU_IS_LOST": 15,
                "UNKNOWN": 999}  # fmt: skip


class PciInfo(ctypes.Structure):
    """nvmlPciInfo_t (the v3 layout nvmlDeviceGetPciInfo_v3 fills)."""

    _fields_ = [
        ("busIdLegacy", ctypes.c_char * 16),
        ("domain", ctypes.c_uint),
        ("bus", ctypes.c_uint),
        ("device", ctypes.c_uint),
        ("pciDeviceId", ctypes.c_uint),
        ("pciSubSystemId", ctypes.c_uint),
        ("busId", ctypes.c_char * 32),
    ]


class Memory(ctypes.Structure):
    """nvmlMemory_t (v1)."""

    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                ("used", ctypes.c_ulonglong)]  # fmt: skip


class ProcessInfoV1(ctypes.Structure):
    """nvmlProcessInfo_v1_t: what the unversioned GetComputeRunningProcesses writes."""

    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong)]


class ProcessInfo(ctypes.Structure):
    """nvmlProcessInfo_t as the _v2 and _v3 calls write it (R510 and later): 24 bytes."""

    _fields_ = [
        ("pid", ctypes.c_uint),
        ("usedGpuMemory", ctypes.c_ulonglong),
        ("gpuInstanceId", ctypes.c_uint),
        ("computeInstanceId", ctypes.c_uint),
    ]


class GpuFabricInfo(ctypes.Structure):
    """nvmlGpuFabricInfo_t: R530-R545 headers name the third field partitionId, later ones
    cliqueId; the bytes are the same. The state is an unsigned char (nvmlGpuFabricState_t)."""

    _fields_ = [
        ("clusterUuid", ctypes.c_ubyte * 16),  # NVML_GPU_FABRIC_UUID_LEN
        ("status", ctypes.c_int),
        ("cliqueId", ctypes.c_uint),
        ("state", ctypes.c_ubyte),
    ]


class GpuFabricInfoV2(ctypes.Structure):
    """nvmlGpuFabricInfo_v2_t, for nvmlDeviceGetGpuFabricInfoV (R550 and later)."""

    _fields_ = [
        ("version", ctypes.c_uint),
        ("clusterUuid", ctypes.c_ubyte * 16),
        ("status", ctypes.c_int),
        ("cliqueId", ctypes.c_uint),
        ("state", ctypes.c_ubyte),
        ("healthMask", ctypes.c_uint),
    ]


class Value(ctypes.Union):
    """nvmlValue_t."""

    _fields_ = [
        ("dVal", ctypes.c_double),
        ("uiVal", ctypes.c_uint),
        ("ulVal", ctypes.c_ulong),
        ("ullVal", ctypes.c_ulonglong),
        ("sllVal", ctypes.c_longlong),
        ("siVal", ctypes.c_int),
        ("usVal", ctypes.c_ushort),
    ]


class FieldValue(ctypes.Structure):
    """nvmlFieldValue_t: the caller sets fieldId and scopeId, the library fills the rest."""

    _fields_ = [
        ("fieldId", ctypes.c_uint),
        ("scopeId", ctypes.c_uint),
        ("timestamp", ctypes.c_longlong),
        ("latencyUsec", ctypes.c_longlong),
        ("valueType", ctypes.c_int),  # nvmlValueType_t
        ("nvmlReturn", ctypes.c_int),  # nvmlReturn_t
        ("value", Value),
    ]


VALUE_TYPE_UNSIGNED_INT = 1  # nvmlValueType_t NVML_VALUE_TYPE_UNSIGNED_INT


def struct_version(struct: type[ctypes.Structure], version: int) -> int:
    """NVML_STRUCT_VERSION(name, ver): sizeof | ver << 24, as nvml.h defines it."""
    return ctypes.sizeof(struct) | version << 24


class SimulatedCrash(AssertionError):
    """What would be a segfault or silent memory corruption in the real library: a NULL or
    too-small buffer where the C function writes, a struct passed by value where C takes a
    pointer. Probes catch Exception and would turn it into an error record, so the simulator
    also keeps every one (SimulatedLibrary.crashes) for the tests to assert on."""


def value(arg: Any) -> Any:
    """The C value of a by-value argument: a ctypes scalar or a Python int/bytes."""
    if isinstance(arg, ctypes._SimpleCData):
        return arg.value
    if isinstance(arg, (int, bytes)):
        return arg
    raise SimulatedCrash(f"a {type(arg).__name__} passed where C takes a scalar by value")


def address(arg: Any) -> tuple[int, int]:
    """(address, bytes the caller allocated there) of a pointer argument; (0, 0) for NULL."""
    if arg is None:
        return 0, 0
    if type(arg).__name__ == "CArgObject":  # ctypes.byref(obj[, offset])
        obj = arg._obj
        return ctypes.addressof(obj), ctypes.sizeof(obj)
    if isinstance(arg, ctypes._Pointer):
        target = arg.contents
        return ctypes.addressof(target), ctypes.sizeof(target)
    if isinstance(arg, ctypes.Array):
        return ctypes.addressof(arg), ctypes.sizeof(arg)
    if isinstance(arg, ctypes.Structure):
        raise SimulatedCrash(
            f"a {type(arg).__name__} passed by value where the C function takes a pointer: "
            "the real library would read the struct's bytes as an address"
        )
    raise SimulatedCrash(f"a {type(arg).__name__} passed where the C function takes a pointer")


def write(arg: Any, ctype: Any, data: Any) -> None:
    """*arg = data, as C writes through a pointer: the bytes of `ctype`, whatever the caller's
    own Python type for that memory says."""
    where, room = address(arg)
    if where == 0:
        raise SimulatedCrash(f"NULL pointer where the library writes a {ctype.__name__}")
    size = ctypes.sizeof(ctype)
    if room < size:
        raise SimulatedCrash(f"{room}-byte buffer where the library writes {size} bytes")
    if isinstance(data, ctypes.Structure):
        ctypes.memmove(where, ctypes.addressof(data), size)
    else:
        ctype.from_address(where).value = data


def write_string(buffer: Any, length: Any, text: str) -> int:
    """strncpy into a caller's char buffer of `length` bytes; INSUFFICIENT_SIZE when it does not
    fit with its NUL, as every NVML string getter documents."""
    raw = text.encode() + b"\0"
    if value(length) < len(raw):
        return INSUFFICIENT_SIZE
    where, room = address(buffer)
    if room < len(raw):
        raise SimulatedCrash(f"length {value(length)} given for a {room}-byte buffer")
    ctypes.memmove(where, raw, len(raw))
    return SUCCESS


def read_struct(arg: Any, ctype: Any) -> Any:
    """A copy of the struct the caller points at (for versioned structs: their version field)."""
    where, room = address(arg)
    if where == 0 or room < ctypes.sizeof(ctypes.c_uint):
        raise SimulatedCrash("NULL or empty struct pointer")
    copy = ctype()
    ctypes.memmove(ctypes.addressof(copy), where, min(room, ctypes.sizeof(ctype)))
    return copy
