"""A simulated libnvidia-ml: each C symbol a Python function over ctypes arguments.

pynvml looks every C function up by name on its loaded library (`getattr(nvmlLib, name)`, in
`_nvmlGetFunctionPointer`), calls it with ctypes arguments and raises on the returned code.
`SimulatedLibrary` stands where that CDLL stands: it exports only the symbols the simulated
driver generation exports (AttributeError otherwise, which pynvml turns into FUNCTION_NOT_FOUND),
reads arguments and writes out-parameters as the C function does (capi.write), and returns the
codes nvml.h documents. Which values it answers comes from a device profile (profiles/*.json).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

from rigcheck.testing.nvml_sim import capi
from rigcheck.testing.nvml_sim.capi import value, write, write_string

SYMBOLS: dict[str, Callable[..., int]] = {}
HANDLE_BASE = 0x5100_0000  # opaque nvmlDevice_t values; pynvml never dereferences them


def symbol(name: str) -> Callable:
    def register(fn: Callable[..., int]) -> Callable[..., int]:
        SYMBOLS[name] = fn
        return fn

    return register


class NvmlStatus(Exception):
    """A non-success return code, raised inside a handler and returned to the binding."""

    def __init__(self, code: int) -> None:
        self.code = code


class SimulatedLibrary:
    """The loaded "libnvidia-ml.so.1" for one machine profile and one driver generation."""

    def __init__(self, machine: dict[str, Any], driver: dict[str, Any]) -> None:
        self.machine = machine
        self.driver = driver
        self.exported = set(driver["symbols"])
        self.initialized = 0
        self.calls: list[str] = []
        self.crashes: list[str] = []

    def __getattr__(self, name: str) -> Callable[..., int]:
        if name.startswith("_") or name not in self.exported:
            raise AttributeError(f"libnvidia-ml {self.driver['version']} has no symbol {name}")
        if name not in SYMBOLS:
            raise NotImplementedError(f"the simulator does not implement {name} yet")
        return lambda *args: self._call(name, *args)

    def _call(self, name: str, *args: Any) -> int:
        self.calls.append(name)
        if name not in ("nvmlInitWithFlags", "nvmlInit_v2") and not self.initialized:
            return capi.UNINITIALIZED
        refused = self.machine.get("answers", {}).get(name)  # machine-wide, e.g. the GPU count
        if refused is not None:
            return capi.RETURN_CODES[refused]
        try:
            return SYMBOLS[name](self, *args)
        except NvmlStatus as status:
            return status.code
        except capi.SimulatedCrash as crash:
            self.crashes.append(f"{name}: {crash}")
            raise
        except Exception as bug:  # a profile or simulator mistake, never rigcheck's to catch
            self.crashes.append(f"{name}: the simulator failed: {bug!r}")
            raise

    # --- helpers for the handlers ---
    def gpu(self, handle: Any) -> dict[str, Any]:
        """The profile entry behind an nvmlDevice_t; GPU_IS_LOST for a GPU off the bus."""
        address = ctypes.cast(handle, ctypes.c_void_p).value or 0
        index = (address - HANDLE_BASE) // 0x100
        gpus = self.machine["gpus"]
        if not 0 <= index < len(gpus) or address != HANDLE_BASE + index * 0x100:
            raise NvmlStatus(capi.INVALID_ARGUMENT)
        return self.read_gpu(gpus[index])

    def read_gpu(self, gpu: dict[str, Any]) -> dict[str, Any]:
        if gpu.get("lost"):
            raise NvmlStatus(capi.GPU_IS_LOST)
        return gpu

    def field(self, gpu: dict[str, Any], name: str, call: str) -> Any:
        """gpu[name], or the return code the profile gives this call on this GPU."""
        answer = gpu.get("answers", {}).get(call)
        if answer is not None:
            raise NvmlStatus(capi.RETURN_CODES[answer])
        data = gpu.get(name)
        if data is None:
            raise NvmlStatus(capi.NOT_SUPPORTED)
        return data


def need(lib: SimulatedLibrary, h: Any, name: str, call: str) -> Any:
    return lib.field(lib.gpu(h), name, call)


# --- init and system ---
@symbol("nvmlInitWithFlags")
def _init(lib, flags):
    lib.initialized += 1
    return capi.SUCCESS


@symbol("nvmlShutdown")
def _shutdown(lib):
    lib.initialized -= 1
    return capi.SUCCESS


@symbol("nvmlSystemGetDriverVersion")
def _driver_version(lib, buffer, length):
    return write_string(buffer, length, lib.driver["version"])


@symbol("nvmlSystemGetCudaDriverVersion_v2")
def _cuda_version(lib, out):
    write(out, ctypes.c_int, lib.driver["cuda_driver_version"])
    return capi.SUCCESS


@symbol("nvmlDeviceGetCount_v2")
def _count(lib, out):
    write(out, ctypes.c_uint, len(lib.machine["gpus"]))
    return capi.SUCCESS


def _set_handle(out, index):
    write(out, ctypes.c_void_p, HANDLE_BASE + index * 0x100)
    return capi.SUCCESS


@symbol("nvmlDeviceGetHandleByIndex_v2")
def _handle_by_index(lib, index, out):
    gpus = lib.machine["gpus"]
    i = value(index)
    if not 0 <= i < len(gpus):
        return capi.INVALID_ARGUMENT
    lib.read_gpu(gpus[i])
    return _set_handle(out, i)


@symbol("nvmlDeviceGetHandleByPciBusId_v2")
def _handle_by_bus(lib, bus_id, out):
    wanted = _bus_key(value(bus_id).decode())
    for i, gpu in enumerate(lib.machine["gpus"]):
        if _bus_key(gpu["pci"]["bus_id"]) == wanted:
            lib.read_gpu(gpu)
            return _set_handle(out, i)
    return capi.NOT_FOUND


def _bus_key(bus_id: str) -> str:
    """NVML accepts "0000:18:00.0" and "00000000:18:00.0" alike."""
    domain, _, rest = bus_id.lower().partition(":")
    return f"{int(domain, 16):08x}:{rest}"


# --- identity ---
def _string_getter(name: str, key: str) -> None:
    @symbol(name)
    def getter(lib, h, buffer, length):
        return write_string(buffer, length, need(lib, h, key, name))


for _name, _key in (
    ("nvmlDeviceGetName", "name"),
    ("nvmlDeviceGetUUID", "uuid"),
    ("nvmlDeviceGetSerial", "serial"),
    ("nvmlDeviceGetVbiosVersion", "vbios"),
    ("nvmlDeviceGetInforomImageVersion", "inforom_image"),
):
    _string_getter(_name, _key)


@symbol("nvmlDeviceGetInforomVersion")
def _inforom(lib, h, which, buffer, length):
    objects = need(lib, h, "inforom_objects", "nvmlDeviceGetInforomVersion")
    name = {0: "oem", 1: "ecc", 2: "power"}.get(value(which))
    if name is None:
        return capi.INVALID_ARGUMENT
    if objects.get(name) is None:
        return capi.NOT_SUPPORTED
    return write_string(buffer, length, objects[name])


@symbol("nvmlDeviceGetPciInfo_v3")
def _pci(lib, h, out):
    pci = need(lib, h, "pci", "nvmlDeviceGetPciInfo_v3")
    bus_id = pci["bus_id"].upper()
    domain, bus, rest = bus_id.split(":")
    info = capi.PciInfo(
        busIdLegacy=f"{int(domain, 16):04X}:{bus}:{rest}".encode(),
        domain=int(domain, 16),
        bus=int(bus, 16),
        device=int(rest.split(".")[0], 16),
        pciDeviceId=int(pci["device_id"], 16),
        pciSubSystemId=int(pci["subsystem_id"], 16),
        busId=f"{int(domain, 16):08X}:{bus}:{rest}".encode(),
    )
    write(out, capi.PciInfo, info)
    return capi.SUCCESS


@symbol("nvmlDeviceGetCudaComputeCapability")
def _cc(lib, h, major, minor):
    cc = need(lib, h, "compute_capability", "nvmlDeviceGetCudaComputeCapability")
    write(major, ctypes.c_int, cc[0])
    write(minor, ctypes.c_int, cc[1])
    return capi.SUCCESS


@symbol("nvmlDeviceGetMemoryInfo")
def _memory(lib, h, out):
    m = need(lib, h, "memory", "nvmlDeviceGetMemoryInfo")
    write(out, capi.Memory, capi.Memory(m["total"], m["free"], m["used"]))
    return capi.SUCCESS


# --- scalar getters: one unsigned (or enum) out-parameter ---
def _scalar(name: str, path: str, ctype: Any = ctypes.c_uint) -> None:
    @symbol(name)
    def getter(lib, h, out):
        data = need(lib, h, path.split(".")[0], name)
        for part in path.split(".")[1:]:
            data = data.get(part) if isinstance(data, dict) else None
            if data is None:
                raise NvmlStatus(capi.NOT_SUPPORTED)
        write(out, ctype, data)
        return capi.SUCCESS


for _name, _path in (
    ("nvmlDeviceGetPersistenceMode", "persistence_mode"),
    ("nvmlDeviceGetEnforcedPowerLimit", "power.enforced_limit_mw"),
    ("nvmlDeviceGetPowerManagementDefaultLimit", "power.default_limit_mw"),
    ("nvmlDeviceGetPowerUsage", "power.draw_mw"),
    ("nvmlDeviceGetCurrPcieLinkGeneration", "pcie.gen_current"),
    ("nvmlDeviceGetMaxPcieLinkGeneration", "pcie.gen_max"),
    ("nvmlDeviceGetGpuMaxPcieLinkGeneration", "pcie.gen_device_max"),
    ("nvmlDeviceGetCurrPcieLinkWidth", "pcie.width_current"),
    ("nvmlDeviceGetMaxPcieLinkWidth", "pcie.width_max"),
    ("nvmlDeviceGetPcieReplayCounter", "pcie.replays"),
    ("nvmlDeviceGetRetiredPagesPendingStatus", "retired_pages.pending"),
):
    _scalar(_name, _path)
for _name in (
    "nvmlDeviceGetCurrentClocksEventReasons",
    "nvmlDeviceGetCurrentClocksThrottleReasons",
):
    _scalar(_name, "clock_event_reasons", ctypes.c_ulonglong)


@symbol("nvmlDeviceGetNumaNodeId")
def _numa(lib, h, out):
    write(out, ctypes.c_int, need(lib, h, "nvml_numa_node", "nvmlDeviceGetNumaNodeId"))
    return capi.SUCCESS


def _pair(name: str, key: str) -> None:
    @symbol(name)
    def getter(lib, h, first, second):
        a, b = need(lib, h, key, name)
        write(first, ctypes.c_uint, a)
        write(second, ctypes.c_uint, b)
        return capi.SUCCESS


_pair("nvmlDeviceGetEccMode", "ecc_mode")
_pair("nvmlDeviceGetMigMode", "mig_mode")


@symbol("nvmlDeviceGetPowerManagementLimitConstraints")
def _power_range(lib, h, low, high):
    power = need(lib, h, "power", "nvmlDeviceGetPowerManagementLimitConstraints")
    if power.get("min_limit_mw") is None:
        return capi.NOT_SUPPORTED
    write(low, ctypes.c_uint, power["min_limit_mw"])
    write(high, ctypes.c_uint, power["max_limit_mw"])
    return capi.SUCCESS


@symbol("nvmlDeviceGetRemappedRows")
def _remapped(lib, h, corr, unc, pending, failure):
    rows = need(lib, h, "remapped_rows", "nvmlDeviceGetRemappedRows")
    for out, key in ((corr, "correctable"), (unc, "uncorrectable"), (pending, "pending"),
                     (failure, "failure")):  # fmt: skip
        write(out, ctypes.c_uint, int(rows[key]))
    return capi.SUCCESS


@symbol("nvmlDeviceGetRetiredPages")
def _retired(lib, h, cause, count, addresses):
    pages = need(lib, h, "retired_pages", "nvmlDeviceGetRetiredPages")
    if value(cause) not in (0, 1):  # nvmlPageRetirementCause_t: multiple single-bit, double-bit
        return capi.INVALID_ARGUMENT
    listed = pages["double_bit" if value(cause) == 1 else "single_bit"]
    return _fill_array(count, addresses, ctypes.c_ulonglong, listed)


def _fill_array(count: Any, array: Any, ctype: Any, items: list) -> int:
    """NVML's two-call array protocol: *count in is the room, out is the number available;
    INSUFFICIENT_SIZE (count set) when the room is too small, NULL array allowed then."""
    room = ctypes.c_uint.from_address(capi.address(count)[0]).value
    write(count, ctypes.c_uint, len(items))
    if room < len(items):
        return capi.INSUFFICIENT_SIZE if items else capi.SUCCESS
    if items:
        where, size = capi.address(array)
        if size < len(items) * ctypes.sizeof(ctype):
            raise capi.SimulatedCrash(f"{size}-byte array for {len(items)} {ctype.__name__}")
        for i, item in enumerate(items):
            cell = item if isinstance(item, ctype) else ctype(item)  # a profile's plain numbers
            ctypes.memmove(
                where + i * ctypes.sizeof(ctype), ctypes.byref(cell), ctypes.sizeof(ctype)
            )
    return capi.SUCCESS


# --- ECC ---
ERROR_TYPES = {0: "corrected", 1: "uncorrected"}  # nvmlMemoryErrorType_t
COUNTERS = {0: "volatile", 1: "aggregate"}  # nvmlEccCounterType_t
LOCATIONS = {2: "dram", 7: "sram"}  # nvmlMemoryLocation_t: DEVICE_MEMORY/DRAM, SRAM


@symbol("nvmlDeviceGetTotalEccErrors")
def _ecc_total(lib, h, kind, counter, out):
    ecc = need(lib, h, "ecc_errors", "nvmlDeviceGetTotalEccErrors")
    key = f"{ERROR_TYPES[value(kind)]}_{COUNTERS[value(counter)]}"
    write(out, ctypes.c_ulonglong, sum(ecc[f"{where}_{key}"] for where in ("dram", "sram")))
    return capi.SUCCESS


@symbol("nvmlDeviceGetMemoryErrorCounter")
def _ecc_location(lib, h, kind, counter, location, out):
    ecc = need(lib, h, "ecc_errors", "nvmlDeviceGetMemoryErrorCounter")
    where = LOCATIONS.get(value(location))
    if where is None:
        return capi.NOT_SUPPORTED  # L1/L2/register file: not counted apart on Ampere and later
    key = f"{where}_{ERROR_TYPES[value(kind)]}_{COUNTERS[value(counter)]}"
    write(out, ctypes.c_ulonglong, ecc[key])
    return capi.SUCCESS


# --- clocks and temperatures ---
CLOCK_TYPES = {0: "graphics", 1: "sm", 2: "mem", 3: "video"}  # nvmlClockType_t
CLOCK_IDS = {0: "current", 1: "app_target", 2: "app_default", 3: "customer_boost_max"}


def _clock(name: str, table: str) -> None:
    @symbol(name)
    def getter(lib, h, kind, out):
        clocks = need(lib, h, table, name)
        mhz = clocks.get(CLOCK_TYPES.get(value(kind), "?"))
        if mhz is None:
            return capi.NOT_SUPPORTED if value(kind) in CLOCK_TYPES else capi.INVALID_ARGUMENT
        write(out, ctypes.c_uint, mhz)
        return capi.SUCCESS


_clock("nvmlDeviceGetClockInfo", "clocks")
_clock("nvmlDeviceGetMaxClockInfo", "max_clocks")
_clock("nvmlDeviceGetApplicationsClock", "applications_clocks")
_clock("nvmlDeviceGetDefaultApplicationsClock", "default_applications_clocks")


@symbol("nvmlDeviceGetClock")
def _clock_by_id(lib, h, kind, clock_id, out):
    ids = need(lib, h, "clock_ids_sm", "nvmlDeviceGetClock")
    which = CLOCK_IDS.get(value(clock_id))
    if which is None or value(kind) not in CLOCK_TYPES:
        return capi.INVALID_ARGUMENT
    if CLOCK_TYPES[value(kind)] != "sm" or ids.get(which) is None:
        return capi.NOT_SUPPORTED
    write(out, ctypes.c_uint, ids[which])
    return capi.SUCCESS


@symbol("nvmlDeviceGetTemperature")
def _temperature(lib, h, sensor, out):
    if value(sensor) != 0:  # NVML_TEMPERATURE_GPU is the only sensor
        return capi.INVALID_ARGUMENT
    write(out, ctypes.c_uint, need(lib, h, "temperature_c", "nvmlDeviceGetTemperature"))
    return capi.SUCCESS


THRESHOLDS = {0: "shutdown_c", 1: "slowdown_c", 2: "mem_max_c", 3: "gpu_max_c"}


@symbol("nvmlDeviceGetTemperatureThreshold")
def _threshold(lib, h, which, out):
    limits = need(lib, h, "temperature_thresholds", "nvmlDeviceGetTemperatureThreshold")
    name = THRESHOLDS.get(value(which))
    if name is None or limits.get(name) is None:
        return capi.NOT_SUPPORTED
    write(out, ctypes.c_uint, limits[name])
    return capi.SUCCESS


# --- processes ---
def _processes(name: str, kind: str, struct: Any) -> None:
    @symbol(name)
    def getter(lib, h, count, infos):
        procs = need(lib, h, "processes", name).get(kind, [])
        items = [struct(pid=p["pid"], usedGpuMemory=p["used_bytes"]) for p in procs]
        return _fill_array(count, infos, struct, items)


for _kind in ("Compute", "Graphics"):
    _processes(f"nvmlDeviceGet{_kind}RunningProcesses", _kind.lower(), capi.ProcessInfoV1)
    for _v in ("_v2", "_v3"):
        _processes(f"nvmlDeviceGet{_kind}RunningProcesses{_v}", _kind.lower(), capi.ProcessInfo)


# --- field values ---
# NVML_FI_DEV_GET_GPU_RECOVERY_ACTION: the first branch that answers it (NVML API reference, change
# log, "Changes between v560 and v565"); older drivers answer NOT_SUPPORTED for the field.
RECOVERY_ACTION_FIELD, RECOVERY_ACTION_SINCE = 230, 565
# Cumulative clock-event time (ns), nvml.h's "Clock Throttle Reason Counters": the perf-policy
# ids since the CUDA 11.0 header (R450); the slowdown ids 251-253 in the CUDA 12.9 and 13.0
# headers (R575, R580; the CUDA 13.1 header renumbers them 269-271, past this simulator's R580).
# The clock-event time counters' field ids, from nvml.h as each header numbers them (NVIDIA's
# header history, NVIDIA/go-nvml pkg/nvml/nvml.h): the perf-policy three since R450; the three
# slowdowns 251-253 in the CUDA 12.9/13.0 headers (R575, R580), 269-271 from CUDA 13.1 (R590),
# where 251-253 are power-smoothing fields this simulator does not answer.
PERF_POLICY_FIELDS = {74: "clocks_event_reason_sw_power_cap", 75: "perf_policy_thermal",
                      76: "clocks_event_reason_sync_boost"}  # fmt: skip
SLOWDOWN_NAMES = ("clocks_event_reason_sw_therm_slowdown", "clocks_event_reason_hw_therm_slowdown",
                  "clocks_event_reason_hw_power_brake_slowdown")  # fmt: skip


def clock_event_field_name(field_id: int, branch: int) -> str | None:
    """The counter a driver of BRANCH answers under FIELD_ID; None: not a counter there."""
    if field_id in PERF_POLICY_FIELDS:
        return PERF_POLICY_FIELDS[field_id] if branch >= 450 else None
    first = 251 if 575 <= branch <= 580 else 269 if branch >= 590 else None
    if first is None or not first <= field_id < first + len(SLOWDOWN_NAMES):
        return None
    return SLOWDOWN_NAMES[field_id - first]


VALUE_TYPE_UNSIGNED_LONG_LONG = 3  # nvmlValueType_t


@symbol("nvmlDeviceGetFieldValues")
def _field_values(lib, h, count, values):
    """Each requested field's value and return code, written into the caller's array."""
    gpu = lib.gpu(h)
    n = value(count)
    where, room = capi.address(values)
    size = ctypes.sizeof(capi.FieldValue)
    if n <= 0 or where == 0:
        return capi.INVALID_ARGUMENT
    if room < n * size:
        raise capi.SimulatedCrash(f"{room}-byte array for {n} field values of {size} bytes")
    for i in range(n):
        field = capi.FieldValue.from_address(where + i * size)
        field.nvmlReturn, field.valueType = capi.NOT_SUPPORTED, capi.VALUE_TYPE_UNSIGNED_INT
        if field.fieldId == RECOVERY_ACTION_FIELD and lib.driver["branch"] >= RECOVERY_ACTION_SINCE:
            # A healthy GPU reports NVML_GPU_RECOVERY_ACTION_NONE (0); profiles say otherwise.
            field.value.uiVal = int(gpu.get("recovery_action") or 0)
            field.nvmlReturn = capi.SUCCESS
        _clock_event_field(lib, gpu, field)
    return capi.SUCCESS


def _clock_event_field(lib, gpu: dict, field: Any) -> None:
    """A clock-event time counter: the profile's nanoseconds (0, a GPU never held, by default),
    on a driver whose header has the id; a profile's None is the board not answering."""
    # The branch of the version the library reports (a 595 capture runs on the R580 generation's
    # symbols but numbers its fields as its own header does).
    name = clock_event_field_name(field.fieldId, int(str(lib.driver["version"]).split(".")[0]))
    if name is None:
        return
    times = gpu.get("clock_event_time_ns") or {}
    if name in times and times[name] is None:
        return
    field.valueType = VALUE_TYPE_UNSIGNED_LONG_LONG
    field.value.ullVal = int(times.get(name) or 0)
    field.nvmlReturn = capi.SUCCESS
