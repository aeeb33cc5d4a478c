"""Fabric facts from a fake sysfs, and the fabric checks replayed on them: a healthy HGX H100
node passes, each broken one fails at its check naming the port, NIC or GPU."""

import json
from pathlib import Path

import pytest
from fake_sysfs import build_node

from rigcheck.facts.fabric.nics import parse_rate, probe_fabric, same_switch
from rigcheck.facts.snapshot import Facts
from rigcheck.spec import load_spec
from rigcheck.testing.synthetic import synthetic_snapshot

REPO = Path(__file__).resolve().parents[2]
NODE_SPEC = REPO / "docs/fabric/dgx-h100.json"  # 8 x 400 Gb/s IB, one per GPU, on its switch
AZURE_SPEC = REPO / "docs/fabric/azure-nd-h100-v5.json"  # the same, placement by NUMA node
FABRIC_CHECKS = {
    "test_rdma_nic_count",
    "test_rdma_ports_up",
    "test_rdma_port_rate",
    "test_rdma_nic_pcie_link",
    "test_rdma_nic_placement",
    "test_gpudirect_rdma",
}


@pytest.fixture(scope="module")
def h100_node():
    return synthetic_snapshot(load_spec("h100"), gpus=8)


def with_fabric(snapshot: dict, root: Path, **broken) -> dict:
    bus_ids = [d["pci"]["bus_id"] for d in snapshot["devices"]]
    fabric = probe_fabric(snapshot["devices"], build_node(root, bus_ids, **broken))
    return {**snapshot, "fabric": fabric}


def fabric_run(replay, snapshot: dict, node_spec: Path = NODE_SPEC):
    return replay(
        snapshot, "-m", "h100", "--gpus", "8", f"--fabric={node_spec}", "-k", "test_fabric"
    )


def test_the_probe_reads_ports_placement_and_gpudirect(h100_node, tmp_path):
    fabric = with_fabric(h100_node, tmp_path)["fabric"]
    Facts({**h100_node, "fabric": fabric})  # valid against facts.schema.json
    names = [d["name"] for d in fabric["rdma_devices"]]
    assert names == [f"mlx5_{i}" for i in range(9)]  # 8 IB NICs and the Ethernet VF
    nic = fabric["rdma_devices"][3]
    counters = nic["ports"][0].pop("counters")  # tests/rdma judge them
    assert nic["ports"][0].pop("gids") == []  # an IB port's GIDs are not read (RoCE only)
    assert nic["ports"] == [
        {"port": 1, "state": "ACTIVE", "phys_state": "LinkUp", "rate": "400 Gb/sec (4X NDR)",
         "rate_gbps": 400.0, "link_layer": "InfiniBand"},
    ]  # fmt: skip
    assert counters["counters"]["link_downed"] == 0 and counters["hw_counters"] is None
    assert nic["driver"] == "mlx5_core" and nic["fw_ver"] == "28.39.1002" and not nic["efa"]
    assert nic["pci"]["numa_node"] == 0 and len(nic["pci"]["bridges"]) == 3
    assert same_switch(nic["pci"], fabric["gpus"][3]["pci"])
    assert not same_switch(nic["pci"], fabric["gpus"][2]["pci"])
    assert fabric["gpudirect_rdma"]["nvidia_peermem"] is True


def test_no_infiniband_class_is_not_applicable(tmp_path):
    fabric = probe_fabric([], tmp_path)
    assert fabric["applicable"] is False and "no RDMA device" in fabric["reason"]


def test_unreadable_files_are_error_records_not_crashes(h100_node, tmp_path):
    fabric = with_fabric(h100_node, tmp_path, rates={2: "fast"})["fabric"]
    (tmp_path / "sys/class/infiniband/mlx5_4/ports/1/state").unlink()
    again = probe_fabric(h100_node["devices"], tmp_path)
    assert "error" in fabric["rdma_devices"][2]["ports"][0]["rate_gbps"]
    assert "error" in again["rdma_devices"][4]["ports"][0]["state"]
    assert "error" in probe_fabric([{"index": 0, "pci": None}], tmp_path)["gpus"][0]["pci"]
    with pytest.raises(ValueError):
        parse_rate("fast")


def test_a_healthy_node_passes_every_fabric_check(replay, h100_node, tmp_path):
    for spec in (NODE_SPEC, AZURE_SPEC):
        result = fabric_run(replay, with_fabric(h100_node, tmp_path / spec.stem), spec)
        assert result.ret == 0, result.describe()
        assert "6 passed" in result.output, result.describe()


def test_no_fabric_expected_skips_with_the_reason(replay, h100_node, tmp_path):
    result = replay(
        with_fabric(h100_node, tmp_path), "-m", "h100", "--gpus", "8", "-k", "test_fabric", "-rs"
    )
    assert result.ret == 0 and "6 skipped" in result.output, result.describe()
    assert "no RDMA fabric expected for h100" in result.output


BROKEN = {
    "port_down": ({"down": {3: ("1: DOWN", "3: Disabled")}}, {"test_rdma_ports_up"},
                  "mlx5_3 port 1: state DOWN, phys_state Disabled"),
    "port_slow": ({"rates": {2: "200 Gb/sec (4X HDR)"}}, {"test_rdma_port_rate"},
                  "mlx5_2 port 1: 200 Gb/sec (4X HDR)"),
    "nic_missing": ({"nics": 7}, {"test_rdma_nic_count", "test_rdma_nic_placement"},
                    "7 RDMA NICs of 8 expected"),
    "nic_far": ({"far_nic": 5}, {"test_rdma_nic_placement"},
                "mlx5_5 (0000:c5:00.0, NUMA 0) shares no PCIe switch with a GPU"),
    "no_gpudirect": ({"peermem": False}, {"test_gpudirect_rdma"},
                     "nvidia_peermem is not loaded"),
    "nic_pcie_x8": ({"links": {6: ("32.0 GT/s PCIe", "8")}}, {"test_rdma_nic_pcie_link"},
                    "mlx5_6: x8 at 32 GT/s, where it and its slot run x16 at 32 GT/s"),
}  # fmt: skip


def test_a_nic_on_the_wrong_numa_node_fails_by_numa_placement(replay, h100_node, tmp_path):
    result = fabric_run(replay, with_fabric(h100_node, tmp_path, far_nic=5), AZURE_SPEC)
    assert set(result.failed) == {"test_rdma_nic_placement"}, result.describe()
    assert (
        "NUMA node 1: 4 GPUs (4, 5, 6, 7) but 3 NICs (mlx5_4, mlx5_6, mlx5_7)"
        in (result.failed["test_rdma_nic_placement"])
    )


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_fabric_fails_at_its_check(replay, h100_node, tmp_path, case):
    broken, failing, message = BROKEN[case]
    result = fabric_run(replay, with_fabric(h100_node, tmp_path, **broken))
    assert set(result.failed) == failing, result.describe()
    first = sorted(failing)[0]
    assert message in result.failed[first], result.failed[first]


def test_a_node_with_no_rdma_fails_when_one_is_expected(replay, h100_node, tmp_path):
    snapshot = {**h100_node, "fabric": probe_fabric(h100_node["devices"], tmp_path)}
    result = fabric_run(replay, snapshot)
    assert set(result.failed) == FABRIC_CHECKS, result.describe()
    assert "no RDMA fabric on this node" in result.failed["test_rdma_ports_up"]


def test_a_fabric_section_missing_from_an_old_snapshot_fails_closed(replay, h100_node):
    result = fabric_run(replay, h100_node)
    assert set(result.failed) == FABRIC_CHECKS, result.describe()
    assert "not in the snapshot" in result.failed["test_rdma_nic_count"]


def test_a_bad_node_spec_is_one_line(replay, h100_node, tmp_path):
    bad = tmp_path / "fabric.json"
    bad.write_text(json.dumps({"nics_per_gpu": 1, "source": "mine"}))
    result = fabric_run(replay, h100_node, bad)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "invalid fabric node spec" in result.output and "rate_gbps" in result.output
