"""rigcheck's NVML probes through the real pynvml, with only libnvidia-ml simulated below it.

Every machine profile (profiles/machines, from real nvidia-smi captures) under every driver
generation: what the probes write is what the library answered, and nothing rigcheck does
makes the library crash or an error record where the library answered.
"""

from __future__ import annotations

import pynvml
import pytest

from rigcheck.facts.nvidia.nvml import probe_nvidia
from rigcheck.facts.probe import is_error
from rigcheck.testing.nvml_sim import DRIVERS, MACHINES, machine_profile, simulated_nvml

HEALTHY = [m for m in MACHINES if not m.startswith("vgpu")]


def probe(machine, driver="R580"):
    with simulated_nvml(machine, driver) as lib:
        software, devices = probe_nvidia()
    assert not lib.crashes, lib.crashes
    return software, devices


def errors_in(record, path=""):
    """Every error record inside a fact, with its path."""
    if is_error(record):
        return [f"{path}: {record['error']}"]
    if isinstance(record, dict):
        return [e for k, v in record.items() for e in errors_in(v, f"{path}.{k}")]
    if isinstance(record, list):
        return [e for i, v in enumerate(record) for e in errors_in(v, f"{path}[{i}]")]
    return []


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("machine", HEALTHY)
def test_no_nvml_fact_is_an_error_on_a_healthy_machine(machine, driver):
    _, devices = probe(machine, driver)
    fabric_calls_missing = driver in ("R470", "R525")  # the fabric call came with R530
    # Before 12.550.52 the binding has no _v2 process list, which is all a driver before R510
    # has (R418-R470): there the processes are an error record naming the binding to install.
    no_process_call = int(driver[1:]) < 510 and not hasattr(
        pynvml, "nvmlDeviceGetComputeRunningProcesses_v2"
    )
    found = [
        e
        for d in devices
        for e in errors_in({k: v for k, v in d.items() if k != "pcie_aer"}, f"gpu{d['index']}")
        if not (fabric_calls_missing and ".fabric:" in e and "Function Not Found" in e)
        and not (no_process_call and ".processes:" in e and "nvidia-ml-py>=12.550.52" in e)
    ]
    assert not found, found


@pytest.mark.parametrize("driver", ["R535", "R580"])
def test_hgx_fabric_registration_is_read_as_the_library_wrote_it(driver):
    """The wrapper takes (handle, struct pointer) and returns a code; the struct is nvml.h's."""
    _, devices = probe("h100_hgx", driver)
    for d in devices:
        assert d["fabric"] == {
            "state": "completed",
            "status": 0,
            "clique_id": 0,
            "cluster_uuid": "00" * 16,
        }


def test_fabric_clique_and_uuid_come_from_their_own_bytes():
    machine = machine_profile("h100_hgx")
    machine["gpus"][0]["fabric"].update(
        state=2, status=0, clique_id=7, cluster_uuid="0102030405060708090a0b0c0d0e0f10"
    )
    _, devices = probe(machine)
    assert devices[0]["fabric"] == {
        "state": "in_progress",
        "status": 0,
        "clique_id": 7,
        "cluster_uuid": "0102030405060708090a0b0c0d0e0f10",
    }


def test_fabric_off_nvswitch_is_not_supported_not_an_error():
    _, devices = probe("l40s")
    assert devices[0]["fabric"] is None


def test_a_binding_without_library_mismatch_error_still_reads_clocks_and_processes(
    monkeypatch,
):
    """nvidia-ml-py before 12.550.52 has no NVMLLibraryMismatchError (12.535.x, the floor)."""
    monkeypatch.delattr(pynvml, "NVMLLibraryMismatchError", raising=False)
    for driver in ("R525", "R580"):
        _, devices = probe("h100_hgx", driver)
        assert devices[0]["throttle_reasons"] == ["gpu_idle"]
        assert devices[0]["processes"] == []
        assert devices[0]["power"]["max_limit_w"] == 700.0


@pytest.mark.parametrize("driver", ["R525", "R535"])
def test_numa_node_on_a_driver_older_than_the_binding_is_unknown_not_an_error(driver):
    """nvidia-ml-py 13 binds nvmlDeviceGetNumaNodeId; drivers before R545 do not export it."""
    _, devices = probe("h100_hgx", driver)
    assert devices[0]["numa_node"] is None


def test_running_processes_are_read_through_the_two_call_protocol():
    """First call with no room: INSUFFICIENT_SIZE and the count; then the array."""
    machine = machine_profile("h100_hgx")
    machine["gpus"][0]["processes"]["compute"] = [
        {"pid": 4242, "used_bytes": 2 * 2**30},
        {"pid": 4343, "used_bytes": 512 * 2**20},
    ]
    _, devices = probe(machine)
    assert devices[0]["processes"] == [
        {"pid": 4242, "used_bytes": 2 * 2**30},
        {"pid": 4343, "used_bytes": 512 * 2**20},
    ]


def test_identity_is_what_the_capture_says():
    software, devices = probe("h100_hgx")
    assert software == {"present": True, "version": "580.105.08", "cuda_driver_version": "13.0"}
    assert len(devices) == 8
    d = devices[0]
    assert d["name"] == "NVIDIA H100 80GB HBM3"
    assert d["pci"] == {
        "bus_id": "0000:53:00.0",
        "device_id": "0x2330",
        "vendor_id": "0x10DE",
        "subsystem_id": "0x16C110DE",
    }
    assert d["memory_total_bytes"] == 81559 * 2**20
    assert d["clocks"] == {"sm_mhz": 345, "mem_mhz": 2619, "sm_max_mhz": 1980, "mem_max_mhz": 2619}
    assert [link["version"] for link in d["nvlink"]] == ["4.0"] * 18


def test_a_gpu_off_the_bus_is_a_device_that_says_so():
    machine = machine_profile("h100_hgx")
    machine["gpus"][3]["lost"] = True
    _, devices = probe(machine)
    assert len(devices) == 8
    assert "NVMLError_GpuIsLost" in devices[3]["name"]["error"]
    assert devices[2]["name"] == "NVIDIA H100 80GB HBM3"


def test_nvlink_numbers_past_the_last_link_are_skipped():
    """INVALID_ARGUMENT for link 12..35 of an A100 (12 links): not links, not errors."""
    _, devices = probe("a100_sxm")
    assert [link["link"] for link in devices[0]["nvlink"]] == list(range(12))
    assert [e["link"] for e in devices[0]["nvlink_errors"]] == list(range(12))


def test_no_driver_is_a_reason_not_a_crash(monkeypatch):
    monkeypatch.setattr(pynvml, "nvmlLib", None)
    monkeypatch.setattr(pynvml, "CDLL", _no_library)
    from rigcheck.facts.nvidia.nvml import probe_nvidia as fresh

    software, devices = fresh()
    assert software["present"] is False and "NVML unavailable" in software["reason"]
    assert devices == []


def _no_library(name):
    raise OSError(f"{name}: cannot open shared object file")


def test_a_binding_without_v2_process_calls_on_a_pre_r510_driver_says_what_to_install(
    monkeypatch,
):
    """nvidia-ml-py 12.535.x binds no _v2 process list and maps the unversioned name to the
    _v3 symbol, which R470 lacks: the fact says which binding reads it."""
    for kind in ("Compute", "Graphics"):
        monkeypatch.delattr(pynvml, f"nvmlDeviceGet{kind}RunningProcesses_v2", raising=False)
    _, devices = probe("h100_hgx", "R470")
    assert "install nvidia-ml-py>=12.550.52" in devices[0]["processes"]["error"]


def test_the_bindings_own_fabric_struct_is_why_rigcheck_brings_its_own():
    """nvidia-ml-py 12.x sizes clusterUuid as 80 chars where nvml.h has 16 bytes: through its
    struct a registered HGX GPU reads as state 0 (not_supported). rigcheck's FabricInfo reads 3."""
    import ctypes

    from rigcheck.facts.nvidia.counters import FabricInfo

    with simulated_nvml("h100_hgx"):
        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        theirs, ours = pynvml.c_nvmlGpuFabricInfo_t(), FabricInfo()
        pynvml.nvmlDeviceGetGpuFabricInfo(h, ctypes.byref(theirs))
        pynvml.nvmlDeviceGetGpuFabricInfo(h, ctypes.byref(ours))
        pynvml.nvmlShutdown()
    assert ours.state == 3
    misaligned = ctypes.sizeof(theirs) != ctypes.sizeof(FabricInfo)
    assert theirs.state == (0 if misaligned else 3)
