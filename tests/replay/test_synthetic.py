"""Synthetic snapshots have exactly the probes' shape: each probe, fed the snapshot's own values
through what it reads (the real pynvml over a simulated libnvidia-ml; fakes of torch, sysctl
and sysfs), writes the same record back."""

import json
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
from amd_real import real_amdsmi
from counter_fakes import write_aer

from rigcheck.facts.amd import devices as amd
from rigcheck.facts.apple import sysctl as apple
from rigcheck.facts.host import torch_probe
from rigcheck.facts.nvidia import counters, nvml
from rigcheck.facts.nvidia.topology import nodes_of_cpus, nvlink_between, parse_cpulist
from rigcheck.spec import Spec, load_all
from rigcheck.testing.nvml_sim import simulated_nvml
from rigcheck.testing.nvml_sim.from_facts import profile_from_snapshot
from rigcheck.testing.synthetic import synthetic_snapshot

SPECS = load_all()
RECORDED = json.loads(
    (Path(__file__).resolve().parents[2] / "fixtures" / "snapshots" / "cpu-ci.json").read_text()
)
NVIDIA = [n for n, s in SPECS.items() if s.vendor == "nvidia"]
GPU = [n for n, s in SPECS.items() if s.backend in ("cuda", "rocm")]


@pytest.mark.parametrize("name", NVIDIA)
def test_nvml_probe_writes_back_the_synthetic_device(name, monkeypatch, tmp_path):
    """Through the real pynvml: the simulated libnvidia-ml answers what the snapshot recorded."""
    snapshot = synthetic_snapshot(SPECS[name], gpus=2)
    monkeypatch.setattr(nvml, "Path", lambda path: tmp_path / path.lstrip("/"))  # sysfs
    monkeypatch.setattr(counters, "SYSFS_PCI", tmp_path / "sys/bus/pci/devices")
    for device in snapshot["devices"]:
        node = tmp_path / f"sys/bus/pci/devices/{device['pci']['bus_id']}/numa_node"
        write_aer(tmp_path / "sys/bus/pci/devices", device)
        node.write_text(f"{-1 if device['numa_node'] is None else device['numa_node']}\n")
    with simulated_nvml(profile_from_snapshot(snapshot, name)) as lib:
        driver, devices = nvml.probe_nvidia()
    assert not lib.crashes, lib.crashes
    assert driver == snapshot["software"]["nvidia_driver"]
    for got, want in zip(devices, snapshot["devices"], strict=True):
        assert got == want


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
            cpu=SimpleNamespace(get_cpu_capability=lambda: facts["cpu_capability"]),
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
def test_torch_probe_writes_back_the_synthetic_torch(name, monkeypatch):
    facts = synthetic_snapshot(SPECS[name])["software"]["torch"]
    for var in ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"):  # the probe reads oneDNN's cap here
        if facts["onednn_max_cpu_isa"] is None:
            monkeypatch.delenv(var, raising=False)
        else:
            monkeypatch.setenv(var, facts["onednn_max_cpu_isa"])
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
