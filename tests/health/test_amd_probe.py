"""The amdsmi probe through the real amdsmi package over a simulated libamd_smi (tests/amd_real.py:
the C library's status codes, the package's own shapes and exceptions): NOT_SUPPORTED is None,
NO_PERM and every other failure an error record with its reason, one bad read never costs the
device's other facts, and no amdsmi is never a crash."""

import sys

import pytest
from amd_real import DRIVER_NOT_LOADED, NO_PERM, NOT_SUPPORTED, real_amdsmi
from counter_fakes import write_aer

from rigcheck.facts import collect
from rigcheck.facts.amd import devices as amd
from rigcheck.facts.amd import rocm
from rigcheck.facts.amd import smi as amd_smi
from rigcheck.facts.amd import topology as amd_topology
from rigcheck.facts.nvidia import counters
from rigcheck.facts.probe import is_error
from rigcheck.spec import load_spec
from rigcheck.testing.synthetic import synthetic_snapshot


@pytest.fixture
def node(monkeypatch, tmp_path):
    """An 8-GPU MI300X node's good snapshot, with sysfs PCI ids and AER files answered from it."""
    snapshot = synthetic_snapshot(load_spec("mi300x"), gpus=8)
    pci = {d["pci"]["bus_id"]: d["pci"] for d in snapshot["devices"]}
    monkeypatch.setattr(amd, "_pci", lambda bus_id: pci[bus_id])  # this host has no such sysfs
    monkeypatch.setattr(counters, "SYSFS_PCI", tmp_path / "aer")
    for device in snapshot["devices"]:
        write_aer(tmp_path / "aer", device)  # the kernel's aer_dev_* files (tests/counter_fakes)
    return snapshot


def probe(node, module):
    devices, other = amd.probe_amd(node["software"]["torch"]["devices"], load=lambda: module)
    return devices, other["rocm"]


def fake(node):
    return real_amdsmi(node["devices"], topology=node["topology"])


def test_a_healthy_node_reads_back(node):
    devices, other = amd.probe_amd(node["software"]["torch"]["devices"], load=lambda: fake(node))
    assert devices == node["devices"]
    assert other["rocm"]["amdsmi_lib"] == "24.6.2"
    assert other["topology"]["pairs"] == node["topology"]["pairs"]


def test_the_topology_reads_numa_placement_from_sysfs(node, tmp_path):
    """Each GPU's NUMA node and local CPUs from a fake /sys, as the synthetic node has them."""
    want = node["topology"]
    for node_id, cpus in want["host_numa_cpus"].items():
        folder = tmp_path / "devices/system/node" / f"node{node_id}"
        folder.mkdir(parents=True)
        (folder / "cpulist").write_text(cpus + "\n")
    for gpu in want["gpus"]:
        folder = tmp_path / "bus/pci/devices" / gpu["bus_id"]
        folder.mkdir(parents=True)
        (folder / "numa_node").write_text(f"{gpu['numa_node']}\n")
        (folder / "local_cpulist").write_text(gpu["cpu_affinity"] + "\n")
    got = amd_topology.amd_topology(node["software"]["torch"]["devices"], want["pairs"], tmp_path)
    assert got == want


def test_a_pair_link_not_supported_is_none_and_p2p_still_read(node):
    module = fake(node)
    module.failures[("amdsmi_topo_get_link_type", "0000:18:00.0")] = NOT_SUPPORTED
    _, other = amd.probe_amd(node["software"]["torch"]["devices"], load=lambda: module)
    pairs = other["topology"]["pairs"]
    assert pairs[0]["link"] is None and pairs[0]["p2p"] == {"accessible": True}
    assert pairs[-1] == node["topology"]["pairs"][-1]


def test_through_sys_modules_the_real_import_path_is_used(node, monkeypatch):
    monkeypatch.setitem(sys.modules, "amdsmi", fake(node))
    devices, _ = amd.probe_amd(node["software"]["torch"]["devices"])
    assert devices == node["devices"]


def test_not_supported_is_none_and_the_rest_is_read(node):
    module = fake(node)
    module.failures[("amdsmi_get_gpu_xgmi_link_status", "0000:18:00.0")] = NOT_SUPPORTED
    devices, _ = probe(node, module)
    assert devices[0]["xgmi"] is None
    assert devices[0]["ras"] == node["devices"][0]["ras"]
    assert devices[1]["xgmi"] == node["devices"][1]["xgmi"]


def test_permission_denied_is_an_error_record_saying_so(node):
    module = fake(node)
    module.failures[("amdsmi_get_gpu_bad_page_info", None)] = NO_PERM
    devices, _ = probe(node, module)
    assert all(is_error(d["bad_pages"]) for d in devices)
    assert "permission denied" in devices[0]["bad_pages"]["error"]
    assert devices[0]["power_cap"] == node["devices"][0]["power_cap"]


def test_a_refused_inner_read_keeps_its_reason(node):
    module = fake(node)
    module.failures[("amdsmi_gpu_xgmi_error_status", None)] = NO_PERM
    module.failures[("amdsmi_get_gpu_bad_page_threshold", None)] = NOT_SUPPORTED
    devices, _ = probe(node, module)
    assert "permission denied" in devices[0]["xgmi"]["error_status"]["error"]
    assert devices[0]["xgmi"]["up"] == 7
    assert devices[0]["bad_pages"]["threshold"] is None


def test_counters_amdsmi_writes_as_na_are_none(node):
    for d in node["devices"]:
        d["pcie_link"]["replays"] = d["pcie_link"]["nak_sent"] = None
    devices, _ = probe(node, fake(node))
    assert devices[0]["pcie_link"]["replays"] is None
    assert devices[0]["pcie_link"]["width_current"] == 16


def test_a_disabled_ras_block_is_not_counted(node):
    devices, _ = probe(node, fake(node))
    df = next(b for b in devices[0]["ras_blocks"] if b["block"] == "DF")
    assert df == {"block": "DF", "state": "DISABLED", "counts": None}


@pytest.mark.parametrize(
    "failure",
    [
        ModuleNotFoundError("No module named 'amdsmi'"),
        KeyError("libamd_smi.so"),  # what the PyPI wheel raises on a host without ROCm
    ],
)
def test_no_usable_amdsmi_is_an_error_record_per_fact(node, failure):
    def load():
        raise failure

    devices, other = amd.probe_amd(node["software"]["torch"]["devices"], load=load)
    for d in devices:
        for key in amd_smi.KEYS:
            assert is_error(d[key]) and "amdsmi is not usable here" in d[key]["error"]
    assert is_error(other["rocm"]["amdsmi_lib"])
    assert len(other["topology"]["pairs"]) == 28
    assert all(is_error(p["link"]) and is_error(p["p2p"]) for p in other["topology"]["pairs"])


def test_without_amdsmi_installed_nothing_raises(node, monkeypatch):
    monkeypatch.setitem(sys.modules, "amdsmi", None)  # import amdsmi -> ImportError
    devices, _ = amd.probe_amd(node["software"]["torch"]["devices"])
    assert "ModuleNotFoundError" in devices[0]["ras"]["error"]


def test_init_failing_names_the_status(node):
    module = fake(node)
    module.failures[("amdsmi_init", None)] = DRIVER_NOT_LOADED
    devices, rocm_facts = probe(node, module)
    assert "AMDSMI_STATUS_DRIVER_NOT_LOADED" in devices[0]["xgmi"]["error"]
    assert "amdsmi_init failed" in rocm_facts["amdsmi_lib"]["error"]


def test_a_gpu_amdsmi_does_not_list_is_named(node):
    module = real_amdsmi(node["devices"][1:], topology=node["topology"])
    devices, _ = probe(node, module)
    assert "amdsmi lists no GPU at 0000:18:00.0" in devices[0]["ras"]["error"]
    assert devices[1]["ras"] == node["devices"][1]["ras"]


def test_the_cpu_class_has_no_amd_facts(monkeypatch):
    """A CPU-only host: no AMD devices and no AMD node facts (software.rocm is then None)."""
    monkeypatch.setattr(collect, "is_apple_silicon", lambda: False)
    torch_facts = synthetic_snapshot(load_spec("cpu"))["software"]["torch"]
    assert collect._other_devices(None, torch_facts) == ([], {})


def test_rocm_versions_from_the_host(tmp_path):
    (tmp_path / ".info").mkdir()
    (tmp_path / ".info" / "version").write_text("6.2.0-66\n")
    (tmp_path / "lib").mkdir()
    for name in ("libhsa-runtime64.so", "libhsa-runtime64.so.1", "libhsa-runtime64.so.1.14.60200"):
        (tmp_path / "lib" / name).write_text("")
    module = tmp_path / "amdgpu_version"
    module.write_text("6.8.5\n")
    facts = rocm.probe_rocm(None, "24.6.2", root=tmp_path, module=module)
    assert facts == {"kernel_driver": "6.8.5", "installed": "6.2.0-66",
                     "hsa_runtime": "1.14.60200", "amdsmi_lib": "24.6.2"}  # fmt: skip


def test_no_rocm_on_the_host_is_none_and_the_in_tree_driver_comes_from_amdsmi(tmp_path):
    facts = rocm.probe_rocm(
        {"name": "amdgpu", "version": "6.8.0-45-generic"},
        "24.6.2",
        root=tmp_path / "absent",
        module=tmp_path / "no-version-file",
    )
    assert facts["installed"] is None and facts["hsa_runtime"] is None
    assert facts["kernel_driver"] == "6.8.0-45-generic"


def test_an_unreadable_rocm_version_is_an_error_record(tmp_path):
    (tmp_path / ".info" / "version").mkdir(parents=True)  # a directory: IsADirectoryError
    facts = rocm.probe_rocm(None, None, root=tmp_path, module=tmp_path / "none")
    assert "IsADirectoryError" in facts["installed"]["error"]
    assert "amdgpu not loaded" in facts["kernel_driver"]["error"]


@pytest.mark.parametrize(
    ("torch_hip", "host", "supported"),
    [
        ("6.2.41133-dd7f95766", "5.7.1-98", False),  # the case: KMD 5.7.x stops at 6.1
        ("6.2.41133-dd7f95766", "6.0.2-115", True),  # KMD 6.0.x is supported with 6.2.x
        ("5.7.31921-d1770ee1b", "6.1.0", True),
        ("6.4.43482", "6.1.0", True),  # from ROCm 6.4.0 up to a year apart (the +/-2 rule said no)
        ("6.2.41133", "6.2.0-66", True),
        ("10.0.1", "6.2.0", False),  # a release the row does not list
    ],
)
def test_the_support_matrix_row_of_the_hosts_release(torch_hip, host, supported):
    row = rocm.supported_user_space(rocm.driver_release("6.7.0", host))
    assert (rocm.release_of(torch_hip) in row) is supported


def test_the_hotspot_and_its_thresholds_read_back(node):
    devices, _ = probe(node, fake(node))
    assert devices[0]["amd_temperature"] == {"hotspot_c": 40, "slowdown_c": 100, "shutdown_c": 110}


def test_a_shutdown_threshold_not_reported_is_none(node):
    for d in node["devices"]:
        d["amd_temperature"]["shutdown_c"] = None  # the fake answers NOT_SUPPORTED
    devices, _ = probe(node, fake(node))
    assert devices[0]["amd_temperature"]["shutdown_c"] is None
    assert devices[0]["amd_temperature"]["slowdown_c"] == 100


def test_a_refused_temperature_read_is_an_error_record(node):
    module = fake(node)
    module.failures[("amdsmi_get_temp_metric", "0000:18:00.0")] = NO_PERM
    devices, _ = probe(node, module)
    assert "permission denied" in devices[0]["amd_temperature"]["error"]
    assert devices[1]["amd_temperature"] == node["devices"][1]["amd_temperature"]


def test_no_hotspot_sensor_is_none_not_a_crash(node):
    for d in node["devices"]:
        d["amd_temperature"]["hotspot_c"] = None
    devices, _ = probe(node, fake(node))
    assert all(d["amd_temperature"] is None for d in devices)


def test_an_idle_gpu_lists_no_process(node):
    devices, _ = probe(node, fake(node))
    assert all(d["processes"] == [] for d in devices)


def test_a_process_holding_the_gpu_is_listed_with_its_vram(node):
    """(The stand-in this file once used also answered "N/A" for a process's VRAM; the real
    amdsmi passes vram_mem through as a number in every release, so that case is gone.)"""
    node["devices"][0]["processes"] = [{"pid": 48213, "used_bytes": 2**33}]
    node["devices"][1]["processes"] = [{"pid": 7, "used_bytes": 0}, {"pid": 9, "used_bytes": 1}]
    devices, _ = probe(node, fake(node))
    assert devices[0]["processes"] == [{"pid": 48213, "used_bytes": 2**33}]
    assert devices[1]["processes"] == [{"pid": 7, "used_bytes": 0}, {"pid": 9, "used_bytes": 1}]


def test_a_refused_process_list_is_an_error_record(node):
    module = fake(node)
    module.failures[("amdsmi_get_gpu_process_list", None)] = NO_PERM
    devices, _ = probe(node, module)
    assert all("permission denied" in d["processes"]["error"] for d in devices)
