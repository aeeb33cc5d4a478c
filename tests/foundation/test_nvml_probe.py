"""The NVML probe through the real pynvml over a simulated libnvidia-ml (rigcheck/testing/nvml_sim):
field formats, NotSupported, and errors as records."""

import pynvml
import pytest

from rigcheck.detect import describe_device, no_device_reason
from rigcheck.facts import Facts
from rigcheck.facts.nvidia import nvml
from rigcheck.testing.nvml_sim import machine_profile, simulated_nvml


def idle_h100(gpus: int = 1, **answers) -> dict:
    """An idle H100 SXM on a single-GPU VM (driver 550.54.15), one process holding 1 GiB;
    `answers` maps a C symbol to the return code it gives instead."""
    machine = machine_profile("h100_hgx")
    machine.update(driver_version="550.54.15", cuda_driver_version=12040)
    machine["gpus"] = machine["gpus"][:gpus]
    gpu = machine["gpus"][0]
    gpu["pci"]["bus_id"] = "00000000:18:00.0"
    gpu["pcie"]["gen_current"] = 1  # idle GPUs drop the link gen
    gpu["processes"]["compute"] = [{"pid": 4242, "used_bytes": 1 << 30}]
    gpu["answers"] = answers
    return machine


def probe(machine, driver=None):
    with simulated_nvml(machine, driver) as lib:
        result = nvml.probe_nvidia()
    assert not lib.crashes, lib.crashes
    return result


def test_driver_and_device_facts_have_the_documented_formats():
    driver, (gpu,) = probe(idle_h100())
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


def test_not_supported_is_none_not_an_error():
    _, (gpu,) = probe(idle_h100())
    assert gpu["retired_pages"] is None  # Hopper remaps rows instead of retiring pages
    assert gpu["remapped_rows"] == {
        "correctable": 0,
        "uncorrectable": 0,
        "pending": False,
        "failure": False,
    }


def test_context_a_vgpu_guest_cannot_read_keeps_the_fact_it_qualifies():
    machine = idle_h100(
        nvmlDeviceGetPowerUsage="NOT_SUPPORTED",
        nvmlDeviceGetPowerManagementDefaultLimit="NOT_SUPPORTED",
    )
    _, (gpu,) = probe(machine)
    assert gpu["power"] == {
        "limit_w": 700.0,
        "default_limit_w": None,
        "max_limit_w": 700.0,
        "draw_w": None,
    }


def test_a_failing_read_is_an_error_record_and_the_rest_is_still_read():
    _, (gpu,) = probe(idle_h100(nvmlDeviceGetEccMode="GPU_IS_LOST"))
    assert gpu["ecc"] == {"error": "NVMLError_GpuIsLost: GPU is lost"}
    assert gpu["compute_capability"] == "9.0"


def test_unknown_throttle_bits_are_kept():
    machine = idle_h100()
    machine["gpus"][0]["clock_event_reasons"] = 0x1 | 0x40 | 0x8000
    _, (gpu,) = probe(machine)
    assert gpu["throttle_reasons"] == ["gpu_idle", "hw_thermal_slowdown", "unknown_0x8000"]


def test_no_driver_is_a_fact_with_its_reason(monkeypatch):
    """No simulator: pynvml's own CDLL("libnvidia-ml.so.1") fails, as on a machine without it."""
    monkeypatch.setattr(pynvml, "nvmlLib", None)
    monkeypatch.setattr(pynvml, "CDLL", _no_library)
    driver, devices = nvml.probe_nvidia()
    assert devices == [] and driver["present"] is False
    assert "NVML Shared Library Not Found" in driver["reason"]


def _no_library(name):
    raise OSError(f"{name}: cannot open shared object file: No such file or directory")


def test_an_older_driver_is_read_through_the_calls_it_has():
    """nvidia-ml-py binds calls newer than the driver: R470 has no clock-event reasons, no _v3
    process lists and no device PCIe maximum; the probe falls back instead of failing closed."""
    machine = idle_h100()
    machine["gpus"][0]["processes"]["graphics"] = [{"pid": 4343, "used_bytes": 1 << 20}]
    _, (gpu,) = probe(machine, "R470")
    assert gpu["throttle_reasons"] == ["gpu_idle"]
    assert gpu["pcie"]["gen_max"] == 5 and gpu["pcie"]["gen_device_max"] is None
    if not hasattr(pynvml, "nvmlDeviceGetComputeRunningProcesses_v2"):
        # nvidia-ml-py before 12.550.52 (tox -e nvml-oldest): no call R470 has; it says so.
        assert "install nvidia-ml-py>=12.550.52" in gpu["processes"]["error"]
        return
    assert gpu["processes"] == [
        {"pid": 4242, "used_bytes": 1 << 30},
        {"pid": 4343, "used_bytes": 1 << 20},
    ]


def test_a_gpu_nvml_cannot_open_is_a_device_saying_so_not_a_crash():
    machine = idle_h100(gpus=2)
    machine["gpus"][1]["lost"] = True
    _, (good, lost) = probe(machine)
    assert good["name"] == "NVIDIA H100 80GB HBM3"
    assert lost["index"] == 1 and "NVML cannot open GPU 1" in lost["pci"]["error"]
    assert describe_device(lost).startswith("an unreadable nvidia device (NVML cannot open GPU 1")


def test_a_device_count_nvml_cannot_read_is_the_reason_no_gpu_shows():
    machine = idle_h100()
    machine["answers"] = {"nvmlDeviceGetCount_v2": "UNKNOWN"}
    driver, devices = probe(machine)
    assert devices == [] and driver["version"] == "550.54.15"
    facts = Facts({"software": {"nvidia_driver": driver}, "devices": devices})
    assert "NVML could not count the GPUs" in no_device_reason(facts)


def test_nvlink_version_decodes_nvmls_enum_not_its_number():
    """nvml.h: NVML_NVLINK_VERSION_3_0 = 4 (A100), _4_0 = 6 (H100), _5_0 = 7 (B200)."""
    from rigcheck.facts.nvidia.nvml import nvlink_version

    assert [nvlink_version(c) for c in (2, 4, 6, 7)] == ["2.0", "3.0", "4.0", "5.0"]
    assert nvlink_version(42) == "unknown (NVML code 42)"
    assert nvlink_version(None) is None and nvlink_version({"error": "x"}) == {"error": "x"}


def test_nvlink_versions_are_nvidia_ml_pys_enum():
    pynvml = pytest.importorskip("pynvml")
    from rigcheck.facts.nvidia.nvml import NVLINK_VERSIONS

    for code, version in NVLINK_VERSIONS.items():
        name = f"NVML_NVLINK_VERSION_{version.replace('.', '_')}"
        assert getattr(pynvml, name, code) == code, name
