"""NCCL's own rules, as rigcheck/rdma/nccl_ib.py applies them: the examples of NCCL's
environment-variable documentation, NCCL's GDR levels, PCIe distances."""

import pytest

from rigcheck.rdma import nccl_ib

PORTS = [("mlx5_0", 1), ("mlx5_1", 1), ("mlx5_10", 1), ("mlx5_bond_0", 1), ("mlx4_0", 2)]


@pytest.mark.parametrize(
    ("value", "chosen"),
    [("mlx5", ["mlx5_0", "mlx5_1", "mlx5_10", "mlx5_bond_0"]),  # prefixes (NCCL docs example)
     ("=mlx5_1", ["mlx5_1"]),  # exact names: not mlx5_10
     ("mlx5_1", ["mlx5_1", "mlx5_10"]),
     ("=mlx5_0:1,mlx5_1:1", ["mlx5_0", "mlx5_1"]),
     ("mlx4_0:1", []), ("mlx4_0:2", ["mlx4_0"]),
     ("^=mlx5_1,mlx5_10", ["mlx5_0", "mlx5_bond_0", "mlx4_0"]),
     ("^mlx5", ["mlx4_0"])],
)  # fmt: skip
def test_ib_hca_selects_as_nccl_documents(value, chosen):
    assert [d for d, _ in nccl_ib.hca_selected(value, PORTS)] == chosen


def test_ib_hca_problems_name_the_unknown_token_and_the_shortfall():
    ports = [(f"mlx5_{i}", 1) for i in range(4)]
    assert nccl_ib.hca_problems("=mlx5_0,mlx5_1,mlx5_2,mlx5_3", ports, 4) == []
    assert nccl_ib.hca_problems("mlx5", ports, 4) == []
    problems = nccl_ib.hca_problems("=mlx5_0,mlx5_9", ports, 4)
    assert problems[0].startswith("NCCL_IB_HCA==mlx5_0,mlx5_9: mlx5_9 matches no port")
    assert "lets NCCL use 1 of the 4 expected ports (mlx5_0:1;" in problems[1]
    assert nccl_ib.hca_problems("^mlx5_3", ports, 3) == []
    assert len(nccl_ib.hca_problems("^mlx5_3", ports, 4)) == 1


@pytest.mark.parametrize(
    ("value", "level"),
    [(None, "PXB"), ("", "PXB"), ("loc", "LOC"), ("PIX", "PIX"), ("SYS", "SYS"), ("0", "LOC"),
     ("2", "PXB"), ("3", "PHB"), ("4", "SYS"), ("5", "SYS")],
)  # fmt: skip
def test_gdr_level_reads_names_and_numbers(value, level):
    assert nccl_ib.gdr_level(value) == level


@pytest.mark.parametrize("value", ["NVL", "6", "-1", "PXN"])
def test_gdr_level_refuses_what_nccl_does_not_know(value):
    with pytest.raises(ValueError, match="NCCL_NET_GDR_LEVEL"):
        nccl_ib.gdr_level(value)


def place(bridges, numa=0):
    return {"bus_id": "x", "numa_node": numa, "bridges": bridges}


@pytest.mark.parametrize(
    ("gpu", "nic", "distance"),
    [(place(["r0", "up0", "dn0"]), place(["r0", "up0", "dn1"]), "PIX"),  # one switch
     (place(["r0", "up0", "dn0", "up1", "dn2"]), place(["r0", "up0", "dn1"]), "PXB"),  # nested
     (place(["r0", "up0"]), place(["r0", "up9"]), "PXB"),  # below one root port
     (place(["r0"]), place(["r1"]), "PHB"), (place([]), place([]), "PHB"),
     (place(["r0"], 0), place(["r1"], 1), "SYS")],
)  # fmt: skip
def test_pcie_distance_as_nccl_names_paths(gpu, nic, distance):
    assert nccl_ib.pcie_distance(gpu, nic) == distance


def test_gdr_problems_name_each_gpu_beyond_the_level():
    gpus = [(0, place(["r0", "up0", "dn0"])), (1, place(["r1"], 1))]
    nics = [("mlx5_0", place(["r0", "up0", "dn1"])), ("mlx5_1", place(["r2"], 0))]
    assert nccl_ib.gdr_problems("PXB", gpus, nics) == ["GPU 1: nearest NIC mlx5_0 is SYS away"]
    assert nccl_ib.gdr_problems("SYS", gpus, nics) == []
    assert nccl_ib.gdr_problems("LOC", gpus, nics)[0] == "GPU 0: nearest NIC mlx5_0 is PIX away"
    assert nccl_ib.gdr_problems("PXB", gpus, []) == ["no RDMA NIC to reach"]


def test_socket_interface_must_exist_and_be_up():
    ifs = {
        "eth0": {"operstate": "up"},
        "ib0": {"operstate": "down"},
        "lo": {"operstate": "unknown"},
    }
    assert nccl_ib.socket_problems("eth", ifs) == []
    assert nccl_ib.socket_problems("=ib0", ifs) == [
        "NCCL_SOCKET_IFNAME==ib0 selects ib0, none of them up"
    ]
    assert "matches none of eth0, ib0, lo" in nccl_ib.socket_problems("ens", ifs)[0]


@pytest.mark.parametrize(
    ("value", "wanted", "problem"),
    [(None, None, None), ("106", None, None), ("106", 106, None), ("256", None, "0-255"),
     ("high", None, "0-255"), ("0", 106, "NCCL_IB_TC=0,"), (None, 106, "NCCL_IB_TC=unset")],
)  # fmt: skip
def test_traffic_class(value, wanted, problem):
    spec = {} if wanted is None else {"traffic_class": wanted}
    problems = nccl_ib.tc_problems({"NCCL_IB_TC": value}, spec)
    assert (problems == []) if problem is None else (problem in problems[0])


def roce_port(types=("IB/RoCE v1", "RoCE v2")):
    gids = [{"index": i, "gid": "g", "type": t, "netdev": "ens1np0"} for i, t in enumerate(types)]
    return {"gids": gids}


@pytest.mark.parametrize(("mtu", "ok"), [(4199, False), (4200, True), (9000, True), (1500, False)])
def test_roce_mtu_floor(mtu, ok):
    problems = nccl_ib.roce_problems("p", roce_port(), {}, {"ens1np0": {"mtu": mtu}}, {})
    assert (problems == []) is ok
    assert (
        nccl_ib.roce_problems("p", roce_port(), {}, {"ens1np0": {"mtu": 1500}}, {"min_mtu": 1500})
        == []
    )


def test_roce_gid_index_rules():
    ifs = {"ens1np0": {"mtu": 9000}}
    assert nccl_ib.roce_problems("p", roce_port(), {"NCCL_IB_GID_INDEX": "1"}, ifs, {}) == []
    assert nccl_ib.roce_problems("p", roce_port(), {"NCCL_IB_GID_INDEX": "-1"}, ifs, {}) == []
    v1 = {"NCCL_IB_GID_INDEX": "0"}
    assert nccl_ib.roce_problems("p", roce_port(), v1, ifs, {}) == [
        "p: NCCL_IB_GID_INDEX=0 is a IB/RoCE v1 GID"
    ]
    assert (
        nccl_ib.roce_problems("p", roce_port(), {**v1, "NCCL_IB_ROCE_VERSION_NUM": "1"}, ifs, {})
        == []
    )
    assert nccl_ib.roce_problems("p", roce_port(("IB/RoCE v1",)), {}, ifs, {})[0].startswith(
        "p: no RoCE v2 GID"
    )
    assert "could not be read" in nccl_ib.roce_problems("p", roce_port(), {}, {}, {})[0]


def test_the_nearest_nic_is_nearest_by_path_not_by_name():
    gpus = [(0, place(["r1", "up1", "dn0"], 1))]
    nics = [("mlx5_0", place(["r0"], 0)), ("mlx5_1", place(["r1", "up1", "dn1"], 1))]
    assert nccl_ib.gdr_problems("PXB", gpus, nics) == []
    assert nccl_ib.gdr_problems("LOC", gpus, nics) == ["GPU 0: nearest NIC mlx5_1 is PIX away"]


def test_hca_message_lists_every_port_found():
    ports = [("mlx5_0", 1), ("mlx5_1", 1)]
    assert nccl_ib.hca_problems("=mlx5_0", ports, 2) == [
        "NCCL_IB_HCA==mlx5_0 lets NCCL use 1 of the 2 expected ports (mlx5_0:1; found mlx5_0:1, "
        "mlx5_1:1)"
    ]
    assert nccl_ib.hca_problems("=mlx5_0", [], 1)[0] == (
        "NCCL_IB_HCA==mlx5_0: mlx5_0 matches no port (found none)"
    )
