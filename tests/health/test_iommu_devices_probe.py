"""The per-device IOMMU probe on a fake /sys laid out as the kernel lays it out: each PCI device's
iommu_group is a link to /sys/kernel/iommu_groups/N, whose `type` file names the DMA domain."""

import os

from rigcheck.facts.host.iommu_devices import probe_iommu_devices

GPUS = [
    {"index": 0, "pci": {"bus_id": "0000:18:00.0"}},
    {"index": 1, "pci": {"bus_id": "0000:2A:00.0"}},
]


def fake_sys(root, groups: dict[str, tuple[int, str | None]]):
    """groups: bus id -> (group number, type file text or None for a kernel without it)."""
    pci = root / "sys/bus/pci/devices"
    pci.mkdir(parents=True)
    for bus_id, (number, kind) in groups.items():
        group = root / f"sys/kernel/iommu_groups/{number}"
        group.mkdir(parents=True, exist_ok=True)
        if kind is not None:
            (group / "type").write_text(kind + "\n")
        (pci / bus_id).mkdir()
        os.symlink(f"../../../../kernel/iommu_groups/{number}", pci / bus_id / "iommu_group")
    return pci


def test_passthrough_and_translated_groups_per_gpu(tmp_path):
    fake_sys(tmp_path, {"0000:18:00.0": (12, "identity"), "0000:2a:00.0": (40, "DMA-FQ")})
    assert probe_iommu_devices(GPUS, tmp_path) == [
        {"role": "gpu", "name": "GPU 0", "bus_id": "0000:18:00.0", "group": 12, "type": "identity"},
        {"role": "gpu", "name": "GPU 1", "bus_id": "0000:2a:00.0", "group": 40, "type": "DMA-FQ"},
    ]


def test_no_iommu_group_means_no_translation(tmp_path):
    pci = fake_sys(tmp_path, {})
    for gpu in GPUS:
        (pci / gpu["pci"]["bus_id"].lower()).mkdir()
    entries = probe_iommu_devices(GPUS, tmp_path)
    assert [(e["group"], e["type"]) for e in entries] == [(None, None), (None, None)]


def test_a_kernel_without_the_type_file_is_an_error_record_naming_it(tmp_path):
    fake_sys(tmp_path, {"0000:18:00.0": (3, None)})
    entry = probe_iommu_devices(GPUS[:1], tmp_path)[0]
    assert entry["group"] == 3 and "Linux before 5.11" in entry["type"]["error"]


def test_an_unreadable_type_file_is_an_error_record(tmp_path):
    fake_sys(tmp_path, {"0000:18:00.0": (3, "DMA")})
    (tmp_path / "sys/kernel/iommu_groups/3/type").chmod(0)
    entry = probe_iommu_devices(GPUS[:1], tmp_path)[0]
    if os.geteuid() != 0:  # root reads a mode-0 file anyway
        assert "PermissionError" in entry["type"]["error"]


def test_a_gpu_missing_from_sysfs_and_a_missing_sys_are_error_records(tmp_path):
    fake_sys(tmp_path, {})
    entry = probe_iommu_devices(GPUS[:1], tmp_path)[0]
    assert "does not exist" in entry["group"]["error"] and entry["type"] == entry["group"]
    assert "not Linux" in probe_iommu_devices(GPUS, tmp_path / "nowhere")["error"]


def test_rdma_nics_are_found_through_their_device_link(tmp_path):
    pci = fake_sys(tmp_path, {"0000:3b:00.0": (7, "identity")})
    nic = tmp_path / "sys/class/infiniband/mlx5_0"
    nic.mkdir(parents=True)
    os.symlink(pci / "0000:3b:00.0", nic / "device")
    (tmp_path / "sys/class/infiniband/rxe0").mkdir()  # soft RoCE: no PCI device, not listed
    assert probe_iommu_devices([], tmp_path) == [
        {"role": "rdma", "name": "mlx5_0", "bus_id": "0000:3b:00.0", "group": 7, "type": "identity"}
    ]


def test_devices_without_a_bus_id_are_left_out_and_nothing_raises(tmp_path):
    fake_sys(tmp_path, {})
    odd = [{"index": 0, "pci": {"error": "NVML: GPU is lost"}}, "junk", {"index": 2}]
    assert probe_iommu_devices(odd, tmp_path) == []
    assert probe_iommu_devices({"error": "no NVML"}, tmp_path) == []


def test_the_live_probe_never_raises():
    assert isinstance(probe_iommu_devices([]), (list, dict))
