"""The NVML probe against a fake pynvml: field formats, NotSupported, and errors as records."""

import sys
import types
from collections import namedtuple

import pytest

from rigcheck.detect import describe_device, no_device_reason
from rigcheck.facts import Facts, nvml

Pci = namedtuple("Pci", "busId pciDeviceId pciSubSystemId")
Mem = namedtuple("Mem", "total free used")
Proc = namedtuple("Proc", "pid usedGpuMemory")


class NVMLError(Exception):
    pass


class NotSupported(NVMLError):
    pass


class FunctionNotFound(NVMLError):
    pass


class LibraryMismatch(Exception):
    pass


def fake_pynvml(**overrides):
    """A pynvml stand-in shaped like an idle H100 SXM on a single-GPU VM."""

    def not_supported(*_args):
        raise NotSupported("Not Supported")

    calls = {
        "nvmlInit": lambda: None,
        "nvmlShutdown": lambda: None,
        "nvmlSystemGetDriverVersion": lambda: "550.54.15",
        "nvmlSystemGetCudaDriverVersion_v2": lambda: 12040,
        "nvmlDeviceGetCount": lambda: 1,
        "nvmlDeviceGetHandleByIndex": lambda i: f"h{i}",
        "nvmlDeviceGetName": lambda h: b"NVIDIA H100 80GB HBM3",
        "nvmlDeviceGetPciInfo": lambda h: Pci(b"00000000:18:00.0", 0x233010DE, 0x16C110DE),
        "nvmlDeviceGetUUID": lambda h: "GPU-1234",
        "nvmlDeviceGetSerial": lambda h: "1650000000001",
        "nvmlDeviceGetMemoryInfo": lambda h: Mem(85520809984, 84900000000, 620809984),
        "nvmlDeviceGetCudaComputeCapability": lambda h: (9, 0),
        "nvmlDeviceGetEccMode": lambda h: (1, 1),
        "nvmlDeviceGetTotalEccErrors": lambda h, kind, counter: 0,
        "nvmlDeviceGetRetiredPagesPendingStatus": not_supported,
        "nvmlDeviceGetRemappedRows": lambda h: (0, 0, 0, 0),
        "nvmlDeviceGetClockInfo": lambda h, c: 345,
        "nvmlDeviceGetMaxClockInfo": lambda h, c: 1980,
        "nvmlDeviceGetCurrentClocksEventReasons": lambda h: 0x1,
        "nvmlDeviceGetTemperature": lambda h, s: 31,
        "nvmlDeviceGetEnforcedPowerLimit": lambda h: 700000,
        "nvmlDeviceGetPowerManagementDefaultLimit": lambda h: 700000,
        "nvmlDeviceGetPowerManagementLimitConstraints": lambda h: (200000, 700000),
        "nvmlDeviceGetPowerUsage": lambda h: 71234,
        "nvmlDeviceGetCurrPcieLinkGeneration": lambda h: 1,  # idle GPUs drop the link gen
        "nvmlDeviceGetMaxPcieLinkGeneration": lambda h: 5,
        "nvmlDeviceGetGpuMaxPcieLinkGeneration": lambda h: 5,
        "nvmlDeviceGetCurrPcieLinkWidth": lambda h: 16,
        "nvmlDeviceGetMaxPcieLinkWidth": lambda h: 16,
        "nvmlDeviceGetPersistenceMode": lambda h: 1,
        "nvmlDeviceGetMigMode": lambda h: (0, 0),
        "nvmlDeviceGetComputeRunningProcesses": lambda h: [Proc(4242, 1 << 30)],
        "nvmlDeviceGetGraphicsRunningProcesses": lambda h: [],
        "nvmlDeviceGetNvLinkState": lambda h, link: 1 if link < 18 else not_supported(),
        # NVML answers its nvmlNvlinkVersion_t: NVML_NVLINK_VERSION_4_0 = 6 on an H100.
        "nvmlDeviceGetNvLinkVersion": lambda h, link: 6,
        "nvmlDeviceGetNumaNodeId": lambda h: 0,
    }
    calls.update(overrides)
    module = types.SimpleNamespace(**calls)
    module.NVMLError, module.NVMLError_NotSupported = NVMLError, NotSupported
    module.NVMLError_FunctionNotFound, module.NVMLLibraryMismatchError = (
        FunctionNotFound,
        LibraryMismatch,
    )
    module.NVML_NVLINK_MAX_LINKS, module.NVML_FEATURE_ENABLED = 18, 1
    for name in [
        "NVML_TEMPERATURE_GPU",
        "NVML_CLOCK_SM",
        "NVML_CLOCK_MEM",
        "NVML_MEMORY_ERROR_TYPE_UNCORRECTED",
        "NVML_MEMORY_ERROR_TYPE_CORRECTED",
        "NVML_VOLATILE_ECC",
        "NVML_AGGREGATE_ECC",
        "NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR",
        "NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS",
    ]:
        setattr(module, name, name)
    return module


@pytest.fixture
def use_fake(monkeypatch):
    def install(**overrides):
        monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(**overrides))

    return install


def test_driver_and_device_facts_have_the_documented_formats(use_fake):
    use_fake()
    driver, (gpu,) = nvml.probe_nvidia()
    assert driver == {"present": True, "version": "550.54.15", "cuda_driver_version": "12.4"}
    assert gpu["pci"] == {
        "bus_id": "0000:18:00.0",
        "device_id": "0x2330",
        "vendor_id": "0x10DE",
        "subsystem_id": "0x16C110DE",
    }
    assert gpu["name"] == "NVIDIA H100 80GB HBM3"
    assert gpu["compute_capability"] == "9.0"
    assert gpu["ecc"] == {"current": True, "pending": True}
    assert gpu["throttle_reasons"] == ["gpu_idle"]
    assert gpu["power"]["limit_w"] == 700.0
    assert gpu["pcie"]["gen_current"] == 1 and gpu["pcie"]["gen_max"] == 5
    assert gpu["processes"] == [{"pid": 4242, "used_bytes": 1 << 30}]
    assert len(gpu["nvlink"]) == 18 and all(link["active"] for link in gpu["nvlink"])
    # The NVLink version, not NVML's enum value (6 would read as a "version 6" NVLink).
    assert {(link["version"], link["nvml_code"]) for link in gpu["nvlink"]} == {("4.0", 6)}


def test_not_supported_is_none_not_an_error(use_fake):
    use_fake()
    _, (gpu,) = nvml.probe_nvidia()
    assert gpu["retired_pages"] is None  # Hopper remaps rows instead of retiring pages
    assert gpu["remapped_rows"] == {
        "correctable": 0,
        "uncorrectable": 0,
        "pending": False,
        "failure": False,
    }


def test_context_a_vgpu_guest_cannot_read_keeps_the_fact_it_qualifies(use_fake):
    def not_supported(*_args):
        raise NotSupported("Not Supported")

    use_fake(
        nvmlDeviceGetPowerUsage=not_supported,
        nvmlDeviceGetPowerManagementDefaultLimit=not_supported,
    )
    _, (gpu,) = nvml.probe_nvidia()
    assert gpu["power"] == {
        "limit_w": 700.0,
        "default_limit_w": None,
        "max_limit_w": 700.0,
        "draw_w": None,
    }


def test_a_failing_read_is_an_error_record_and_the_rest_is_still_read(use_fake):
    def lost(h):
        raise NVMLError("GPU is lost")

    use_fake(nvmlDeviceGetEccMode=lost)
    _, (gpu,) = nvml.probe_nvidia()
    assert gpu["ecc"] == {"error": "NVMLError: GPU is lost"}
    assert gpu["compute_capability"] == "9.0"


def test_unknown_throttle_bits_are_kept(use_fake):
    use_fake(nvmlDeviceGetCurrentClocksEventReasons=lambda h: 0x1 | 0x40 | 0x8000)
    _, (gpu,) = nvml.probe_nvidia()
    assert gpu["throttle_reasons"] == ["gpu_idle", "hw_thermal_slowdown", "unknown_0x8000"]


def test_no_driver_is_a_fact_with_its_reason(use_fake):
    def missing():
        raise NVMLError("NVML Shared Library Not Found")

    use_fake(nvmlInit=missing)
    driver, devices = nvml.probe_nvidia()
    assert devices == [] and driver["present"] is False
    assert "NVML Shared Library Not Found" in driver["reason"]


def test_an_older_driver_is_read_through_the_calls_it_has(use_fake):
    """nvidia-ml-py binds calls newer than the driver: R525 has no clock-event reasons and
    R470 no _v3 process list; the probe falls back instead of failing the checks closed."""

    def absent(*_args):
        raise FunctionNotFound("Function Not Found")

    def mismatch(*_args):
        raise LibraryMismatch("Unversioned function called ...")

    use_fake(
        nvmlDeviceGetCurrentClocksEventReasons=absent,
        nvmlDeviceGetCurrentClocksThrottleReasons=lambda h: 0x1,
        nvmlDeviceGetComputeRunningProcesses=mismatch,
        nvmlDeviceGetComputeRunningProcesses_v3=absent,
        nvmlDeviceGetComputeRunningProcesses_v2=lambda h: [Proc(4242, 1 << 30)],
        nvmlDeviceGetGraphicsRunningProcesses=mismatch,
        nvmlDeviceGetGraphicsRunningProcesses_v3=absent,
        nvmlDeviceGetGraphicsRunningProcesses_v2=lambda h: [Proc(4343, 1 << 20)],
        nvmlDeviceGetGpuMaxPcieLinkGeneration=absent,
    )
    _, (gpu,) = nvml.probe_nvidia()
    assert gpu["throttle_reasons"] == ["gpu_idle"]
    assert gpu["pcie"]["gen_max"] == 5 and gpu["pcie"]["gen_device_max"] is None
    assert gpu["processes"] == [
        {"pid": 4242, "used_bytes": 1 << 30},
        {"pid": 4343, "used_bytes": 1 << 20},
    ]


def test_a_gpu_nvml_cannot_open_is_a_device_saying_so_not_a_crash(use_fake):
    def handle(i):
        if i == 1:
            raise NVMLError("Unknown Error")
        return f"h{i}"

    use_fake(nvmlDeviceGetCount=lambda: 2, nvmlDeviceGetHandleByIndex=handle)
    _, (good, lost) = nvml.probe_nvidia()
    assert good["name"] == "NVIDIA H100 80GB HBM3"
    assert lost["index"] == 1 and "NVML cannot open GPU 1" in lost["pci"]["error"]
    assert describe_device(lost).startswith("an unreadable nvidia device (NVML cannot open GPU 1")


def test_a_device_count_nvml_cannot_read_is_the_reason_no_gpu_shows(use_fake):
    def count():
        raise NVMLError("Unknown Error")

    use_fake(nvmlDeviceGetCount=count)
    driver, devices = nvml.probe_nvidia()
    assert devices == [] and driver["version"] == "550.54.15"
    facts = Facts({"software": {"nvidia_driver": driver}, "devices": devices})
    assert "NVML could not count the GPUs" in no_device_reason(facts)


def test_nvlink_version_decodes_nvmls_enum_not_its_number():
    """nvml.h: NVML_NVLINK_VERSION_3_0 = 4 (A100), _4_0 = 6 (H100), _5_0 = 7 (B200)."""
    from rigcheck.facts.nvml import nvlink_version

    assert [nvlink_version(c) for c in (2, 4, 6, 7)] == ["2.0", "3.0", "4.0", "5.0"]
    assert nvlink_version(42) == "unknown (NVML code 42)"
    assert nvlink_version(None) is None and nvlink_version({"error": "x"}) == {"error": "x"}


def test_nvlink_versions_are_nvidia_ml_pys_enum():
    pynvml = pytest.importorskip("pynvml")
    from rigcheck.facts.nvml import NVLINK_VERSIONS

    for code, version in NVLINK_VERSIONS.items():
        name = f"NVML_NVLINK_VERSION_{version.replace('.', '_')}"
        assert getattr(pynvml, name, code) == code, name
