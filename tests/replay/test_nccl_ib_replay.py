"""NCCL-over-IB readiness replayed through the real suite on a fake HGX H100 node (InfiniBand,
and the same node with RoCE ports): the healthy node passes, each broken setting fails at its
check naming the port, GPU or setting."""

import json
from pathlib import Path

import pytest
from fake_sysfs import build_node

from rigcheck.facts.fabric.nics import probe_fabric
from rigcheck.spec import load_spec
from rigcheck.testing.synthetic import synthetic_snapshot

NODE_SPEC = Path(__file__).resolve().parents[2] / "docs/fabric/dgx-h100.json"
CHECKS = {
    "test_nccl_may_use_the_rdma_ports",
    "test_nccl_socket_interface_on_this_node",
    "test_gpus_within_nccls_gpudirect_distance",
    "test_roce_ports_ready_for_nccl",
}


@pytest.fixture(scope="module")
def h100_node():
    return synthetic_snapshot(load_spec("h100"), gpus=8)


def node(snapshot, root, settings=None, **broken) -> dict:
    bus_ids = [d["pci"]["bus_id"] for d in snapshot["devices"]]
    broken.setdefault("ethernet_vf", not broken.get("roce"))  # a RoCE node: only its 8 NICs
    fabric = probe_fabric(snapshot["devices"], build_node(root, bus_ids, **broken))
    fabric["nccl_ib"]["settings"].update(settings or {})
    return {**snapshot, "fabric": fabric}


def roce_spec(tmp_path, **roce) -> str:
    spec = json.loads(NODE_SPEC.read_text())
    spec.update(link_layer="Ethernet", roce=roce, source=spec["source"] + " (as RoCE, by hand)")
    path = tmp_path / "roce.json"
    path.write_text(json.dumps(spec))
    return str(path)


def run(replay, snapshot, spec=NODE_SPEC):
    return replay(snapshot, "-m", "h100", "--gpus", "8", f"--fabric={spec}", "-k", "test_nccl_ib")


def test_a_healthy_infiniband_node_passes(replay, h100_node, tmp_path):
    result = run(replay, node(h100_node, tmp_path, {"NCCL_SOCKET_IFNAME": "=eth0"}))
    assert result.ret == 0 and "3 passed, 1 skipped" in result.output, result.describe()


def test_a_healthy_roce_node_passes(replay, h100_node, tmp_path):
    snapshot = node(h100_node, tmp_path / "n", {"NCCL_IB_TC": "106"}, roce=True)
    result = run(replay, snapshot, roce_spec(tmp_path, traffic_class=106))
    assert result.ret == 0 and "3 passed, 1 skipped" in result.output, result.describe()


BROKEN = {
    "ib_disabled": ({"NCCL_IB_DISABLE": "1"}, {}, "test_nccl_may_use_the_rdma_ports",
                    "NCCL_IB_DISABLE=1"),
    "hca_one_of_eight": ({"NCCL_IB_HCA": "=mlx5_0"}, {}, "test_nccl_may_use_the_rdma_ports",
                         "lets NCCL use 1 of the 8 expected ports (mlx5_0:1"),
    "hca_typo": ({"NCCL_IB_HCA": "mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx_7"}, {},
                 "test_nccl_may_use_the_rdma_ports", "mlx_7 matches no port"),
    "hca_excludes_half": ({"NCCL_IB_HCA": "^mlx5_4,mlx5_5,mlx5_6,mlx5_7"}, {},
                          "test_nccl_may_use_the_rdma_ports", "use 4 of the 8"),
    "socket_missing": ({"NCCL_SOCKET_IFNAME": "=ens5"}, {},
                       "test_nccl_socket_interface_on_this_node", "matches none of eth0, ib0"),
    "gdr_level_loc": ({"NCCL_NET_GDR_LEVEL": "LOC"}, {},
                      "test_gpus_within_nccls_gpudirect_distance",
                      "GPU 0: nearest NIC mlx5_0 is PIX away"),
    "gdr_level_bad": ({"NCCL_NET_GDR_LEVEL": "NVL"}, {},
                      "test_gpus_within_nccls_gpudirect_distance", "none of LOC, PIX"),
    "nic_far_from_gpu": ({}, {"far_nic": 5}, "test_gpus_within_nccls_gpudirect_distance",
                         "GPU 5: nearest NIC mlx5_4 is PHB away"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_setting_fails_at_its_check(replay, h100_node, tmp_path, case):
    settings, broken, check, message = BROKEN[case]
    result = run(replay, node(h100_node, tmp_path, settings, **broken))
    assert set(result.failed) == {check}, result.describe()
    assert message in result.failed[check], result.failed[check]


ROCE_BROKEN = {
    "mtu_1500": ({}, {"mtu": 1500}, {}, "mlx5_0:1: ens1np0 MTU 1500, below 4200"),
    "gid_v1": ({"NCCL_IB_GID_INDEX": "2"}, {}, {}, "mlx5_0:1: NCCL_IB_GID_INDEX=2 is a IB/RoCE v1"),
    "gid_missing": ({"NCCL_IB_GID_INDEX": "7"}, {}, {}, "NCCL_IB_GID_INDEX=7 is not a GID"),
    "tc_wrong": ({"NCCL_IB_TC": "0"}, {}, {"traffic_class": 106},
                 "NCCL_IB_TC=0, the site's traffic class is 106"),
    "tc_unset": ({}, {}, {"traffic_class": 106}, "NCCL_IB_TC=unset"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(ROCE_BROKEN))
def test_a_broken_roce_setting_fails_naming_the_port(replay, h100_node, tmp_path, case):
    settings, broken, roce, message = ROCE_BROKEN[case]
    snapshot = node(h100_node, tmp_path / "n", settings, roce=True, **broken)
    result = run(replay, snapshot, roce_spec(tmp_path, **roce))
    assert set(result.failed) == {"test_roce_ports_ready_for_nccl"}, result.describe()
    assert message in result.failed["test_roce_ports_ready_for_nccl"]


def test_a_roce_port_without_an_ip_has_no_v2_gid(replay, h100_node, tmp_path):
    snapshot = node(h100_node, tmp_path / "n", roce=True)
    for device in snapshot["fabric"]["rdma_devices"][:8]:
        device["ports"][0]["gids"] = [
            g for g in device["ports"][0]["gids"] if "v2" not in g["type"]
        ]
    result = run(replay, snapshot, roce_spec(tmp_path))
    assert "mlx5_3:1: no RoCE v2 GID" in result.failed["test_roce_ports_ready_for_nccl"]


def test_an_old_snapshot_without_nccl_settings_fails_closed(replay, h100_node, tmp_path):
    snapshot = node(h100_node, tmp_path)
    del snapshot["fabric"]["nccl_ib"]
    result = run(replay, snapshot)
    assert set(result.failed) == CHECKS, result.describe()
    assert "no NCCL settings" in result.failed["test_nccl_may_use_the_rdma_ports"]
