"""What the simulated libamd_smi knows: a node of AMD GPUs, each a device profile at the C level
(the values libamd_smi writes into its structs: power caps in the unit the release uses, PCIe
speeds in MT/s, enum names as amdsmi.h spells them), answered the way libamd_smi answers.

A profile is plain data (profiles/*.json). Struct fields are filled by name from the struct the
loaded wrapper declared, so one profile serves every release: a field that a release's struct
lacks is not written (that release's library has no such field either) and is listed in
`Node.unwritten`. A string value "AMDSMI_..." in a numeric field is that enum constant of the
loaded release. Calls answer amdsmi_status_t codes: NOT_INIT before amdsmi_init, NOT_SUPPORTED
for a symbol the profile lists under "not_supported", INVAL for an unknown handle, and any code a
test puts in `Node.fail[(symbol, bus id or None)]`, or a profile under "status" (a symbol a
real device answers with an error, e.g. MI300X's xGMI error status: AMDSMI_STATUS_INVAL).
"""

from __future__ import annotations

import ctypes
from typing import Any

SUCCESS, INVAL, NOT_SUPPORTED, NO_PERM, NOT_INIT = 0, 1, 2, 10, 32
HANDLE_BASE = 0x5A5A0000  # processor handles are opaque addresses; these are recognisable
SOCKET_BASE = 0x50C00000


def _scalar(key: str) -> Any:
    """An answer writing the device's `key` into the one out-parameter after the handle."""

    def answer(self: Node, device: dict, out: Any) -> int:
        value = device[key]
        if value is None:
            return NOT_SUPPORTED
        out[0] = self.constant(value) if isinstance(value, str) else value
        return SUCCESS

    return answer


def _struct(key: str, skip: int = 0) -> Any:
    """An answer filling the struct after the handle (and `skip` other arguments)."""

    def answer(self: Node, device: dict, *args: Any) -> int:
        self.fill(args[skip].contents, device[key])
        return SUCCESS

    return answer


class Node:
    """A node's GPUs (`devices`, C-level profiles with a "bdf"), links between pairs (by bus
    ids), and the library's own version."""

    def __init__(self, devices: list[dict[str, Any]], pairs: dict | None = None,
                 lib_version: dict[str, Any] | None = None) -> None:  # fmt: skip
        self.devices = devices
        self.pairs = pairs or {}
        self.lib_version = lib_version or {"major": 25, "minor": 5, "release": 1, "build": "0"}
        self.fail: dict[tuple[str, str | None], int] = {}
        self.unwritten: set[str] = set()
        self.calls: list[str] = []
        self.initialised = False
        self._keep: list[Any] = []  # C strings handed out must outlive the call
        self._names: dict[tuple[int, str, int], list[str]] = {}  # names_of's answers
        # The loaded amdsmi_wrapper (set on import): its constants are the C enums of the
        # release under test.
        self.wrapper: Any = None
        self.release: tuple[int, ...] = (99,)  # the amdsmi release loaded (set on import)

    # --- dispatch -------------------------------------------------------------------------
    def answer(self, name: str, c_args: tuple) -> int:
        self.calls.append(name)
        handler = getattr(self, "_" + name, None)
        if handler is None:
            raise NotImplementedError(f"the simulated libamd_smi does not answer {name} yet")
        if name != "amdsmi_init" and not self.initialised:
            return NOT_INIT
        device = self._device(c_args[0]) if name in PER_DEVICE else None
        if name in PER_DEVICE and device is None:
            return INVAL
        for key in [(name, bus) for bus in self._buses(name, c_args)] + [(name, None)]:
            if key in self.fail:
                return self.fail[key]
        if device is not None and name in device.get("not_supported", ()):
            return NOT_SUPPORTED
        if device is not None and name in device.get("status", {}):  # a profile's known answer
            return self.constant(device["status"][name])
        return handler(device, *c_args[1:]) if name in PER_DEVICE else handler(*c_args)

    def _buses(self, name: str, c_args: tuple) -> list[str]:
        """The bus ids of the GPUs a call is about: its handle, or both of a pair's."""
        count = 2 if name in PER_PAIR else 1 if name in PER_DEVICE else 0
        devices = [self._device(handle) for handle in c_args[:count]]
        return [d["bdf"] for d in devices if d is not None]

    def _device(self, handle: Any) -> dict[str, Any] | None:
        index = (handle or 0) - HANDLE_BASE
        return self.devices[index] if 0 <= index < len(self.devices) else None

    # --- the library ----------------------------------------------------------------------
    def _amdsmi_init(self, flags: int) -> int:
        self.initialised = True
        return SUCCESS

    def _amdsmi_shut_down(self) -> int:
        self.initialised = False
        return SUCCESS

    def _amdsmi_get_lib_version(self, version: Any) -> int:
        build = ctypes.create_string_buffer(str(self.lib_version["build"]).encode())
        self._keep.append(build)
        values = {k: v for k, v in self.lib_version.items() if k != "build"}
        self.fill(version.contents, values)
        version.contents.build = ctypes.cast(build, ctypes.POINTER(ctypes.c_char))
        return SUCCESS

    def _amdsmi_get_socket_handles(self, count: Any, handles: Any) -> int:
        """One socket per GPU, as libamd_smi groups an Instinct GPU's partitions by PCI device."""
        return self._list(count, handles, [SOCKET_BASE + i for i in range(len(self.devices))])

    def _amdsmi_get_processor_handles(self, socket: Any, count: Any, handles: Any) -> int:
        index = (socket or 0) - SOCKET_BASE
        if not 0 <= index < len(self.devices):
            return INVAL
        return self._list(count, handles, [HANDLE_BASE + index])

    def _list(self, count: Any, out: Any, items: list[Any]) -> int:
        """libamd_smi's two-call pattern: a NULL array asks for the count, then the array."""
        if not out:
            count[0] = len(items)
            return SUCCESS
        if count[0] < len(items):
            count[0] = len(items)
            return INSUFFICIENT_SIZE
        for i, item in enumerate(items):
            out[i] = item
        count[0] = len(items)
        return SUCCESS

    def _amdsmi_topo_get_link_type(self, a: Any, b: Any, hops: Any, kind: Any) -> int:
        pair = self._pair(a, b)
        if pair is None:
            return INVAL
        hops[0] = pair["hops"]
        kind[0] = self.link_type(pair["type"])
        return SUCCESS

    def _amdsmi_is_P2P_accessible(self, a: Any, b: Any, accessible: Any) -> int:
        pair = self._pair(a, b)
        if pair is None:
            return INVAL
        accessible[0] = bool(pair["p2p"])
        return SUCCESS

    def _pair(self, a: Any, b: Any) -> dict[str, Any] | None:
        da, db = self._device(a), self._device(b)
        if da is None or db is None:
            return None
        return self.pairs.get((da["bdf"], db["bdf"])) or self.pairs.get((db["bdf"], da["bdf"]))

    # --- per device -----------------------------------------------------------------------
    def _amdsmi_get_gpu_device_bdf(self, device: dict, bdf: Any) -> int:
        """amdsmi_bdf_t's bit fields, LSB first: function 3, device 5, bus 8, domain 48 bits.
        Written as the whole 64-bit word (`as_uint`), the one member every release names alike."""
        domain, bus, rest = device["bdf"].split(":")
        dev, function = rest.split(".")
        word = int(function, 16) | int(dev, 16) << 3 | int(bus, 16) << 8 | int(domain, 16) << 16
        bdf.contents.as_uint = word
        return SUCCESS

    def _amdsmi_get_gpu_ras_block_features_enabled(self, device: dict, block: int, state: Any):
        name = next((n for n in self.names_of("AMDSMI_GPU_BLOCK_", block)
                     if n in device["ras_blocks"]), None)  # fmt: skip
        if name is None:
            return NOT_SUPPORTED
        state[0] = self.constant("AMDSMI_RAS_ERR_STATE_" + device["ras_blocks"][name])
        return SUCCESS

    def _amdsmi_get_gpu_ecc_count(self, device: dict, block: int, counts: Any) -> int:
        names = self.names_of("AMDSMI_GPU_BLOCK_", block)
        values = next((device["ecc_blocks"][n] for n in names if n in device["ecc_blocks"]), None)
        if values is None:
            return NOT_SUPPORTED
        self.fill(counts.contents, values)
        return SUCCESS

    def _amdsmi_get_gpu_bad_page_info(self, device: dict, count: Any, records: Any) -> int:
        pages = device["bad_pages"]
        if not records:
            count[0] = len(pages)
            return SUCCESS
        for i, page in enumerate(pages[: count[0]]):
            self.fill(records[i], page)
        count[0] = min(count[0], len(pages))
        return SUCCESS

    def _amdsmi_get_gpu_process_list(self, device: dict, count: Any, processes: Any) -> int:
        """Fills what the caller's array holds: amdsmi_proc_info_t records (ROCm 6.1 on) or, in
        ROCm 6.0's API, process handles (pids)."""
        found = device["processes"]
        room = count[0]
        count[0] = len(found)
        if not processes and found:
            return SUCCESS
        for i, process in enumerate(found[:room]):
            if isinstance(processes[i], ctypes.Structure):
                self.fill(processes[i], process)
            else:
                processes[i] = process["pid"]
        return SUCCESS if len(found) <= room else OUT_OF_RESOURCES

    def _amdsmi_get_gpu_process_info(self, device: dict, pid: int, info: Any) -> int:
        """ROCm 6.0's per-process read (its process list answers pids)."""
        found = [p for p in device["processes"] if p["pid"] == pid]
        if not found:
            return NOT_FOUND
        self.fill(info.contents, found[0])
        return SUCCESS

    def _amdsmi_get_fw_info(self, device: dict, info: Any) -> int:
        blocks = list(device["firmware"].items())
        info.contents.num_fw_info = len(blocks)
        for entry, (fw_id, version) in zip(info.contents.fw_info_list, blocks, strict=False):
            entry.fw_id, entry.fw_version = self.constant(fw_id), version
        return SUCCESS

    def _amdsmi_get_temp_metric(self, device: dict, sensor: int, metric: int, out: Any) -> int:
        sensors = self.names_of("AMDSMI_TEMPERATURE_TYPE_", sensor)  # HOTSPOT is JUNCTION
        readings = next((device["temperature"][s] for s in sensors if s in device["temperature"]),
                        {})  # fmt: skip
        value = next((readings[m] for m in self.names_of("AMDSMI_TEMP_", metric) if m in readings),
                     None)  # fmt: skip
        if value is None:
            return NOT_SUPPORTED
        out[0] = value
        return SUCCESS

    def _amdsmi_get_clock_info(self, device: dict, kind: int, info: Any) -> int:
        """The clock domain's amdsmi_clk_info_t; "clk" is "cur_clk" before ROCm 6.2 (a
        profile may give both: fill() writes the one the loaded release's struct has)."""
        names = self.names_of("AMDSMI_CLK_TYPE_", kind)  # GFX shares its value with SYS
        values = next((device["clock"][n] for n in names if n in device.get("clock", {})), None)
        if values is None:
            return NOT_SUPPORTED
        self.fill(info.contents, values)
        return SUCCESS

    def _amdsmi_get_power_info(self, device: dict, info: Any) -> int:
        """Socket power in W (0xFFFF: not reported); a profile without it: NOT_SUPPORTED."""
        if device.get("power_info") is None:
            return NOT_SUPPORTED
        self.fill(info.contents, device["power_info"])
        return SUCCESS

    def _amdsmi_get_power_info_v2(self, device: dict, sensor: int, info: Any) -> int:
        """ROCm 6.4's amdsmi_get_power_info calls this, with a sensor index (0: the socket)."""
        return self._amdsmi_get_power_info(device, info) if sensor == 0 else NOT_SUPPORTED

    _amdsmi_get_gpu_bad_page_threshold = _scalar("bad_page_threshold")
    _amdsmi_gpu_xgmi_error_status = _scalar("xgmi_error")
    _amdsmi_get_gpu_pci_replay_counter = _scalar("pci_replay_counter")  # ROCm 6.0's API
    _amdsmi_get_gpu_total_ecc_count = _struct("ecc_total")
    _amdsmi_get_violation_status = _struct("violation")  # ROCm 6.3 on

    def _amdsmi_get_power_cap_info(self, device: dict, sensor: int, info: Any) -> int:
        """Profiles hold microwatts; libamd_smi before ROCm 6.1.2 answered watts (amdsmi
        CHANGELOG, 6.1.2: "now returns values in uW instead of W")."""
        caps = device["power_cap"]
        if self.release < (6, 1, 2):
            caps = {k: v // 1_000_000 if k.endswith("power_cap") else v for k, v in caps.items()}
        self.fill(info.contents, caps)
        return SUCCESS

    _amdsmi_get_pcie_info = _struct("pcie")
    _amdsmi_get_pcie_link_status = _struct("pcie_link_status")  # ROCm 6.0's API
    _amdsmi_get_pcie_link_caps = _struct("pcie_link_caps")  # ROCm 6.0's API
    _amdsmi_get_gpu_xgmi_link_status = _struct("xgmi_links")
    _amdsmi_get_gpu_vbios_info = _struct("vbios")
    _amdsmi_get_gpu_driver_info = _struct("driver")

    # --- helpers --------------------------------------------------------------------------
    def constant(self, name: str) -> int:
        """An enum constant of the loaded release; ROCm 6.0-6.3 spell some without "AMDSMI_"
        (FW_ID_PM, TEMPERATURE_TYPE_HOTSPOT)."""
        if not hasattr(self.wrapper, name) and hasattr(self.wrapper, name.removeprefix("AMDSMI_")):
            return getattr(self.wrapper, name.removeprefix("AMDSMI_"))
        return getattr(self.wrapper, name)

    def link_type(self, kind: str) -> int:
        """amdsmi_topo_get_link_type's out value: ROCm 6.x writes amdsmi_io_link_type_t
        (AMDSMI_IOLINK_TYPE_PCIEXPRESS, _XGMI), 7.x amdsmi_link_type_t (AMDSMI_LINK_TYPE_*)."""
        if hasattr(self.wrapper, "AMDSMI_IOLINK_TYPE_XGMI"):
            return self.constant("AMDSMI_IOLINK_TYPE_" + {"PCIE": "PCIEXPRESS"}.get(kind, kind))
        return self.constant("AMDSMI_LINK_TYPE_" + kind)

    def names_of(self, prefix: str, value: int) -> list[str]:
        """The names (less the prefix) the release's enum gives this value: aliases share one.
        Kept per wrapper: a burn-in reads the same few enums thousands of times."""
        key = (id(self.wrapper), prefix, value)
        if key not in self._names:
            self._names[key] = self._scan_names(prefix, value)
        return self._names[key]

    def _scan_names(self, prefix: str, value: int) -> list[str]:
        short = prefix.removeprefix("AMDSMI_")  # ROCm 6.0-6.3 spell some enums without it
        return [name.removeprefix("AMDSMI_")[len(short) :]
                for name, number in vars(self.wrapper).items()
                if name.removeprefix("AMDSMI_").startswith(short)
                and isinstance(number, int) and number == value]  # fmt: skip

    def fill(self, target: Any, values: dict[str, Any]) -> None:
        """Write a profile's values into a ctypes struct of the loaded release, by field name."""
        fields = {f[0]: f[1] for f in type(target)._fields_}
        for key, value in values.items():
            if key not in fields:
                self.unwritten.add(f"{type(target).__name__}.{key}")
                continue
            kind = fields[key]
            if isinstance(value, dict):
                self.fill(getattr(target, key), value)
            elif isinstance(value, list):
                array = getattr(target, key)
                for i, item in enumerate(value):
                    array[i] = self.constant(item) if isinstance(item, str) else item
            elif isinstance(value, str) and getattr(kind, "_type_", None) is ctypes.c_char:
                setattr(target, key, value.encode())
            elif isinstance(value, str) and value.startswith("AMDSMI_"):
                if hasattr(self.wrapper, value):
                    setattr(target, key, self.constant(value))
                else:
                    self.unwritten.add(f"{type(target).__name__}.{key}={value}")
            else:
                setattr(target, key, value)


INSUFFICIENT_SIZE, OUT_OF_RESOURCES, NOT_FOUND = 41, 15, 31
PER_PAIR = {"amdsmi_topo_get_link_type", "amdsmi_is_P2P_accessible"}
# Symbols whose first argument is a processor handle.
PER_DEVICE = {
    name[1:]
    for name in vars(Node)
    if name.startswith("_amdsmi_")
    and name[1:]
    not in {
        "amdsmi_init",
        "amdsmi_shut_down",
        "amdsmi_get_lib_version",
        "amdsmi_get_socket_handles",
        "amdsmi_get_processor_handles",
        "amdsmi_topo_get_link_type",
        "amdsmi_is_P2P_accessible",
    }
}
