"""Synthetic snapshots have exactly the probes' shape: each probe, fed the snapshot's own values
through a fake of what it reads (pynvml, torch, sysctl, sysfs), writes the same record back."""

import json
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
from amd_real import real_amdsmi
from counter_fakes import NVML_CONSTANTS, NotSupported, add_counter_fakes, write_aer

from rigcheck.facts import amd, apple, counters, nvml, torch_probe
from rigcheck.facts.synthetic import synthetic_snapshot
from rigcheck.facts.topology import nodes_of_cpus, nvlink_between, parse_cpulist
from rigcheck.spec import Spec, load_all

SPECS = load_all()
RECORDED = json.loads(
    (Path(__file__).resolve().parents[2] / "fixtures" / "snapshots" / "cpu-ci.json").read_text()
)
NVIDIA = [n for n, s in SPECS.items() if s.vendor == "nvidia"]
GPU = [n for n, s in SPECS.items() if s.backend in ("cuda", "rocm")]


def unless_none(value, convert=lambda v: v):
    """What NVML gives for a fact the snapshot has: None in the snapshot means NotSupported."""
    if value is None:
        raise NotSupported("Not Supported")
    return convert(value)


def fake_pynvml(device: dict, driver: dict) -> SimpleNamespace:
    """A pynvml that reports one device exactly as the snapshot records it."""
    pci, power, clocks = device["pci"], device["power"], device["clocks"]
    errors, links = device["ecc_errors"], device["nvlink"]
    reasons = {name: bit for bit, name in nvml.THROTTLE_REASONS.items()}
    major, minor = driver["cuda_driver_version"].split(".")

    def nvlink_state(h, link):
        if link >= len(links):
            raise nvml_module.NVMLError("Invalid Argument")
        return int(links[link]["active"])

    def retired(h, cause):
        pages = unless_none(device["retired_pages"])
        return [0] * pages["double_bit" if cause == "double" else "single_bit"]

    nvml_module = SimpleNamespace(
        **NVML_CONSTANTS,
        NVML_TEMPERATURE_GPU=0,
        NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR="double",
        NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS="single",
        nvmlSystemGetDriverVersion=lambda: driver["version"],
        nvmlSystemGetCudaDriverVersion_v2=lambda: int(major) * 1000 + int(minor) * 10,
        nvmlDeviceGetHandleByIndex=lambda i: i,
        nvmlDeviceGetName=lambda h: device["name"].encode(),
        nvmlDeviceGetPciInfo=lambda h: SimpleNamespace(
            busId=f"0000{pci['bus_id'].upper()}".encode(),
            pciDeviceId=int(pci["device_id"], 16) << 16 | int(pci["vendor_id"], 16),
            pciSubSystemId=int(pci["subsystem_id"], 16),
        ),
        nvmlDeviceGetUUID=lambda h: device["uuid"],
        nvmlDeviceGetSerial=lambda h: device["serial"],
        nvmlDeviceGetMemoryInfo=lambda h: SimpleNamespace(
            total=device["memory_total_bytes"], free=device["memory_free_bytes"]
        ),
        nvmlDeviceGetCudaComputeCapability=lambda h: tuple(
            int(p) for p in device["compute_capability"].split(".")
        ),
        nvmlDeviceGetEccMode=lambda h: unless_none(
            device["ecc"], lambda e: (int(e["current"]), int(e["pending"]))
        ),
        nvmlDeviceGetTotalEccErrors=lambda h, kind, counter: unless_none(errors)[
            f"{counter}_{kind}"
        ],
        nvmlDeviceGetRetiredPagesPendingStatus=lambda h: int(
            unless_none(device["retired_pages"])["pending"]
        ),
        nvmlDeviceGetRetiredPages=retired,
        nvmlDeviceGetRemappedRows=lambda h: unless_none(
            device["remapped_rows"],
            lambda r: (r["correctable"], r["uncorrectable"], int(r["pending"]), int(r["failure"])),
        ),
        nvmlDeviceGetClockInfo=lambda h, c: clocks[f"{c}_mhz"],
        nvmlDeviceGetMaxClockInfo=lambda h, c: clocks[f"{c}_max_mhz"],
        nvmlDeviceGetCurrentClocksEventReasons=lambda h: sum(
            reasons[r] for r in device["throttle_reasons"]
        ),
        nvmlDeviceGetTemperature=lambda h, sensor: device["temperature_c"],
        nvmlDeviceGetEnforcedPowerLimit=lambda h: round(power["limit_w"] * 1000),
        nvmlDeviceGetPowerManagementDefaultLimit=lambda h: round(power["default_limit_w"] * 1000),
        nvmlDeviceGetPowerManagementLimitConstraints=lambda h: (
            0,
            round(power["max_limit_w"] * 1000),
        ),
        nvmlDeviceGetPowerUsage=lambda h: round(power["draw_w"] * 1000),
        nvmlDeviceGetCurrPcieLinkGeneration=lambda h: device["pcie"]["gen_current"],
        nvmlDeviceGetMaxPcieLinkGeneration=lambda h: device["pcie"]["gen_max"],
        nvmlDeviceGetGpuMaxPcieLinkGeneration=lambda h: device["pcie"]["gen_device_max"],
        nvmlDeviceGetCurrPcieLinkWidth=lambda h: device["pcie"]["width_current"],
        nvmlDeviceGetMaxPcieLinkWidth=lambda h: device["pcie"]["width_max"],
        nvmlDeviceGetPersistenceMode=lambda h: int(device["persistence_mode"]),
        nvmlDeviceGetMigMode=lambda h: unless_none(
            device["mig"], lambda m: (int(m["current"]), int(m["pending"]))
        ),
        nvmlDeviceGetComputeRunningProcesses=lambda h: [
            SimpleNamespace(pid=p["pid"], usedGpuMemory=p["used_bytes"])
            for p in device["processes"]
        ],
        nvmlDeviceGetGraphicsRunningProcesses=lambda h: [],
        nvmlDeviceGetNvLinkState=nvlink_state,
        nvmlDeviceGetNvLinkVersion=lambda h, link: links[link]["nvml_code"],
    )
    return add_counter_fakes(nvml_module, device)  # counters.py's reads


@pytest.mark.parametrize("name", NVIDIA)
def test_nvml_probe_writes_back_the_synthetic_device(name, monkeypatch, tmp_path):
    snapshot = synthetic_snapshot(SPECS[name], gpus=2)
    driver = snapshot["software"]["nvidia_driver"]
    monkeypatch.setattr(nvml, "Path", lambda path: tmp_path / path.lstrip("/"))  # sysfs
    monkeypatch.setattr(counters, "SYSFS_PCI", tmp_path / "sys/bus/pci/devices")
    for device in snapshot["devices"]:
        node = tmp_path / f"sys/bus/pci/devices/{device['pci']['bus_id']}/numa_node"
        write_aer(tmp_path / "sys/bus/pci/devices", device)
        node.write_text(f"{-1 if device['numa_node'] is None else device['numa_node']}\n")
        monkeypatch.setattr(nvml, "_nvml", lambda device=device: fake_pynvml(device, driver))
        assert nvml.probe_device(device["index"]) == device


def fake_torch(facts: dict) -> SimpleNamespace:
    """A torch whose answers are the snapshot's software.torch."""
    bf16 = facts["bf16_supported"] or {}
    nccl = facts["nccl_version"]

    def properties(i):
        d = facts["devices"][i]
        domain, bus, slot = d["pci_bus_id"].replace(".", ":").split(":")[:3]
        major, minor = d["compute_capability"].split(".")
        props = SimpleNamespace(
            name=d["name"], major=int(major), minor=int(minor),
            total_memory=d["total_memory_bytes"], multi_processor_count=d["multi_processor_count"],
            pci_domain_id=int(domain, 16), pci_bus_id=int(bus, 16), pci_device_id=int(slot, 16),
        )  # fmt: skip
        if d["gcn_arch"] is not None:
            props.gcnArchName = d["gcn_arch"]
        return props

    return SimpleNamespace(
        __version__=facts["version"],
        version=SimpleNamespace(cuda=facts["cuda_version"], hip=facts["hip_version"]),
        backends=SimpleNamespace(
            cudnn=SimpleNamespace(
                version=lambda: facts["cudnn_version"], allow_tf32=facts["tf32_cudnn_allowed"]
            ),
            cuda=SimpleNamespace(matmul=SimpleNamespace(allow_tf32=facts["tf32_matmul_allowed"])),
            mps=SimpleNamespace(
                is_built=lambda: facts["mps_built"], is_available=lambda: facts["mps_available"]
            ),
        ),
        cuda=SimpleNamespace(
            is_available=lambda: facts["cuda_available"],
            device_count=lambda: facts["device_count"],
            get_arch_list=lambda: facts["arch_list"],
            is_bf16_supported=lambda including_emulation=True: bf16[
                "with_emulation" if including_emulation else "native"
            ],
            get_device_properties=properties,
            nccl=SimpleNamespace(version=lambda: tuple(int(p) for p in nccl.split("."))),
        ),
        distributed=SimpleNamespace(is_nccl_available=lambda: nccl is not None),
        get_float32_matmul_precision=lambda: facts["float32_matmul_precision"],
    )


@pytest.mark.parametrize("name", sorted(SPECS))
def test_torch_probe_writes_back_the_synthetic_torch(name):
    facts = synthetic_snapshot(SPECS[name])["software"]["torch"]
    assert torch_probe.probe_torch(fake_torch(facts)) == facts


@pytest.mark.parametrize("name", [n for n in GPU if SPECS[n].vendor == "amd"])
def test_amd_probe_writes_back_the_synthetic_devices(name, monkeypatch, tmp_path):
    snapshot = synthetic_snapshot(SPECS[name], gpus=2)
    pci = {d["pci"]["bus_id"]: d["pci"] for d in snapshot["devices"]}
    monkeypatch.setattr(amd, "_pci", lambda bus_id: pci[bus_id])  # sysfs, as this host lacks it
    monkeypatch.setattr(counters, "SYSFS_PCI", tmp_path)
    for device in snapshot["devices"]:
        write_aer(tmp_path, device)
    module = real_amdsmi(snapshot["devices"], topology=snapshot["topology"])  # tests/amd_real.py
    devices, _ = amd.probe_amd(snapshot["software"]["torch"]["devices"], load=lambda: module)
    assert devices == snapshot["devices"]


@pytest.mark.parametrize("name", [n for n, s in SPECS.items() if s.backend == "mps"])
def test_apple_probe_writes_back_the_synthetic_device(name, monkeypatch):
    device = synthetic_snapshot(SPECS[name])["devices"][0]
    answers = {
        "hw.memsize": str(device["memory_total_bytes"]),
        "machdep.cpu.brand_string": device["name"],
        "hw.model": device["model"],
    }

    def sysctl(argv):
        return subprocess.CompletedProcess(argv, 0, stdout=answers[argv[-1]] + "\n", stderr="")

    monkeypatch.setattr(apple.platform, "mac_ver", lambda: (device["macos"], ("", "", ""), "arm64"))
    assert apple.probe_apple_device(sysctl, True) == device


@pytest.mark.parametrize("name", sorted(SPECS))
def test_host_and_cpu_smoke_have_the_recorded_shape(name):
    """Same keys and types as this machine's own recording (None where a host reports none)."""
    mine, recorded = synthetic_snapshot(SPECS[name]), RECORDED
    for path in ("host", "host.cpu", "smoke.cpu_bf16_matmul"):
        a, b = mine, recorded
        for part in path.split("."):
            a, b = a[part], b[part]
        assert a.keys() == b.keys(), path
        for key, value in a.items():
            if value is not None and b[key] is not None:
                assert type(value) is type(b[key]), f"{path}.{key}"


@pytest.mark.parametrize("name", NVIDIA)
def test_topology_is_what_the_probe_derives_from_its_gpus(name):
    topology = synthetic_snapshot(SPECS[name], gpus=8)["topology"]
    gpus = topology["gpus"]
    for gpu in gpus:
        cpus = parse_cpulist(gpu["cpu_affinity"])
        assert gpu["cpu_numa_nodes"] == nodes_of_cpus(cpus, topology["host_numa_cpus"])
    for pair in topology["pairs"]:
        a, b = pair["gpus"]
        assert pair["nvlink"] == nvlink_between(gpus[a], gpus[b])


def test_snapshots_are_deterministic():
    spec = SPECS["h100"]
    assert synthetic_snapshot(spec, gpus=8) == synthetic_snapshot(spec, gpus=8)


def test_a_class_with_no_reference_figures_says_where_to_add_them():
    data = {**SPECS["h100"].data, "class": "zz100"}
    with pytest.raises(KeyError, match="no reference figures for class 'zz100'"):
        synthetic_snapshot(Spec(data, Path("expected/zz100.json")))


def test_a_driver_below_the_class_minimum_is_refused():
    data = json.loads(json.dumps(SPECS["h100"].data))
    data["expect"]["min_driver"]["value"] = "999.1"
    with pytest.raises(ValueError, match=r"older than the class minimum 999\.1"):
        synthetic_snapshot(Spec(data, SPECS["h100"].path))
