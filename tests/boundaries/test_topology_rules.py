"""The topology checks (suites/distributed/test_topology.py) decide on facts alone: each case is
the class's synthetic 8-GPU snapshot with one thing broken, judged by the real suite, and the
failure message is asserted whole where it names what is wrong.

Written against the survivors of `python tools/mutation.py topology` (tests/mutation/
survivors.md): a direct NVLink mesh (DGX-1 V100) with a GPU left out, a switched pair one link
short, NVLink on a PCIe-only class, P2P missing on one capability, NUMA placement off by one
node, an uneven split, and topology facts that leave out or cannot read an entry.
"""

from __future__ import annotations

import pytest

from rigcheck.spec import load_spec
from rigcheck.testing.synthetic import synthetic_snapshot

LINKED = "test_gpu_pairs_linked_as_the_class_expects"
P2P = "test_p2p_where_the_class_expects_it"
NUMA = "test_gpu_numa_node_matches_cpu_affinity"
SPLIT = "test_gpus_split_evenly_across_numa_nodes"
TOPOLOGY = f"{LINKED} or {P2P} or {NUMA} or {SPLIT}"


def node(name: str) -> dict:
    return synthetic_snapshot(load_spec(name), 8)


def judged(run_suite, name: str, facts: dict):
    run = run_suite("distributed", "-m", f"{name} and distributed", "--gpus", "8", "-k", TOPOLOGY,
                    facts=facts)  # fmt: skip
    assert set(run.outcomes) == {LINKED, P2P, NUMA, SPLIT}, run.describe()
    return run


# What each check tells the user to do, after naming what is wrong.
ADVICE = {
    LINKED: (
        "Collectives between them fall back to fewer links or to PCIe. `nvidia-smi nvlink -s` "
        "shows the links per GPU, `nvidia-smi topo -m` the pairs; on NVSwitch nodes the "
        "fabric manager must be running (`systemctl status nvidia-fabricmanager`)."
    ),
    P2P: (
        "NCCL then stages through host memory at a fraction of the bandwidth. Check `nvidia-smi "
        "topo -p2p rw`. On PCIe switches, ACS (Access Control Services) must be off in the BIOS "
        "and the IOMMU in passthrough (iommu=pt); disabled_by_regkey means the driver was "
        "configured to refuse P2P."
    ),
    NUMA: (
        "A rank pinned by this affinity puts its host buffers and NCCL's proxy threads on the far "
        "socket. Compare `nvidia-smi topo -m` (CPU and NUMA affinity) with "
        "/sys/bus/pci/devices/<bus>/numa_node; a wrong or missing node comes from the firmware "
        "(ACPI SRAT/_PXM) or a VM without NUMA passthrough."
    ),
    SPLIT: (
        "A card in the wrong slot or riser, or one that fell off the bus and came back "
        "elsewhere: the ranks on the crowded node share its PCIe root and memory bandwidth. "
        "Check `nvidia-smi topo -m` against the board's manual."
    ),
}


def says(run, test: str) -> str:
    """The check's failure message, as the user reads it."""
    return run.messages[test].removeprefix("AssertionError: ").removeprefix("Failed: ")


def pair(facts: dict, a: int, b: int) -> dict:
    return next(p for p in facts["topology"]["pairs"] if p["gpus"] == [a, b])


def test_a_healthy_mesh_passes_and_a_gpu_without_an_nvlink_peer_fails(run_suite):
    facts = node("v100")
    run = judged(run_suite, "v100", facts)
    assert run.outcomes == {LINKED: "passed", P2P: "passed", NUMA: "passed", SPLIT: "passed"}
    summary = run.properties[LINKED]["gpu_pairs"]
    assert summary == (
        "8 x NV1 (GPU 0 <-> GPU 1, GPU 0 <-> GPU 2, GPU 1 <-> GPU 3, ...); "
        "8 x NV2 (GPU 0 <-> GPU 3, GPU 0 <-> GPU 4, GPU 1 <-> GPU 2, ...); "
        "12 x PCIe SYS (GPU 0 <-> GPU 5, GPU 0 <-> GPU 6, GPU 0 <-> GPU 7, ...)"
    )
    for p in facts["topology"]["pairs"]:
        if 7 in p["gpus"]:
            p["nvlink"] = {"links": 0, "via": None}
    run = judged(run_suite, "v100", facts)
    assert says(run, LINKED).startswith(
        "GPUs without an NVLink peer (no NVSwitch): GPU 7: no NVLink to any other GPU. "
        "Collectives between them fall back to fewer links or to PCIe."
    ), run.describe()
    assert ADVICE[LINKED] in says(run, LINKED)


@pytest.mark.parametrize(("links", "outcome"), [(17, "failed"), (18, "passed")])
def test_a_switched_pair_one_link_short_fails(run_suite, links, outcome):
    facts = node("h100")
    pair(facts, 2, 5)["nvlink"]["links"] = links
    run = judged(run_suite, "h100", facts)
    assert run.outcomes[LINKED] == outcome, run.describe()
    if outcome == "failed":
        assert says(run, LINKED).startswith(
            "1 of 28 GPU pairs short of NVLink: GPU 2 <-> GPU 5: 17 NVLinks (expected 18). "
        ), run.describe()


def test_switched_pairs_without_nvlink_name_their_pcie_path(run_suite):
    facts = node("h100")
    for b in (4, 5, 6):  # three of a kind: listed whole, no "..."
        pair(facts, 0, b).update(nvlink={"links": 0, "via": None}, pcie_path="SYS")
    run = judged(run_suite, "h100", facts)
    assert says(run, LINKED).startswith(
        "3 of 28 GPU pairs short of NVLink: GPU 0 <-> GPU 4: no NVLink, PCIe SYS, across CPU "
        "sockets (the SMP interconnect); GPU 0 <-> GPU 5: no NVLink, PCIe SYS"
    ), run.describe()
    assert run.properties[LINKED]["gpu_pairs"] == (
        "25 x NV18 through NVSwitch (GPU 0 <-> GPU 1, GPU 0 <-> GPU 2, GPU 0 <-> GPU 3, ...); "
        "3 x PCIe SYS (GPU 0 <-> GPU 4, GPU 0 <-> GPU 5, GPU 0 <-> GPU 6)"
    )


def test_nvlink_on_a_pcie_only_class_is_another_product(run_suite):
    facts = node("l40s")
    pair(facts, 0, 1)["nvlink"] = {"links": 4, "via": "direct"}
    run = judged(run_suite, "l40s", facts)
    assert says(run, LINKED).startswith(
        "l40s has no NVLink, yet NVML reports it: GPU 0 <-> GPU 1: NV4. This is a different "
        "product or board than the class; run `rigcheck detect`. Pairs: 1 x NV4 (GPU 0 <-> GPU 1); "
    ), run.describe()


def test_p2p_missing_on_one_capability_of_one_pair_is_named(run_suite):
    facts = node("h100")
    pair(facts, 3, 6)["p2p"]["nvlink"] = "not_supported"
    pair(facts, 1, 2)["p2p"]["write"] = "disabled_by_regkey"
    run = judged(run_suite, "h100", facts)
    assert says(run, P2P).startswith(
        "P2P unavailable on 2 of 28 GPU pairs that should have it: GPU 1 <-> GPU 2 (NV18 through "
        "NVSwitch): write disabled_by_regkey; GPU 3 <-> GPU 6 (NV18 through NVSwitch): nvlink "
        "not_supported. "
    ), run.describe()
    assert f"not_supported. {ADVICE[P2P]}" in says(run, P2P)
    recorded = run.properties[P2P]["p2p"]
    assert recorded["GPU 1 <-> GPU 2"]["write"] == "disabled_by_regkey"


def test_p2p_over_pcie_is_expected_below_the_cpu_only(run_suite):
    facts = node("l40s")
    pair(facts, 0, 1)["p2p"]["read"] = "chipset_not_supported"  # PIX: one PCIe switch
    pair(facts, 0, 4)["p2p"]["read"] = "chipset_not_supported"  # SYS: not expected
    run = judged(run_suite, "l40s", facts)
    assert says(run, P2P).startswith(
        "P2P unavailable on 1 of 4 GPU pairs that should have it: GPU 0 <-> GPU 1 (PCIe PIX): "
        "read chipset_not_supported. "
    ), run.describe()


def test_numa_placement_off_by_one_node_is_named_per_gpu(run_suite):
    facts = node("h100")
    gpus = facts["topology"]["gpus"]
    gpus[1]["numa_node"] = -1  # on a two-node host
    gpus[2]["numa_node"] = 1  # its affinity is node 0's
    gpus[3]["cpu_numa_nodes"] = [0, 1]  # spans both
    run = judged(run_suite, "h100", facts)
    assert says(run, NUMA).startswith(
        "GPU NUMA placement inconsistent: "
        "GPU 1 (0000:2a:00.0): no NUMA node (-1) on a host with 2 NUMA nodes; "
        "GPU 2 (0000:3a:00.0): PCI device on NUMA node 1, but its CPU affinity 0-55,112-167 is "
        "on node 0; "
        "GPU 3 (0000:5d:00.0): CPU affinity 0-55,112-167 spans NUMA nodes [0, 1]. "
    ), run.describe()
    assert f"[0, 1]. {ADVICE[NUMA]}" in says(run, NUMA)


def test_no_numa_node_on_a_one_node_host_is_fine_and_nothing_is_split(run_suite):
    facts = node("h100")
    facts["topology"]["host_numa_cpus"] = {"0": "0-223"}
    for gpu in facts["topology"]["gpus"]:
        gpu.update(numa_node=-1, cpu_numa_nodes=[0], cpu_affinity="0-223")
    run = judged(run_suite, "h100", facts)
    assert run.outcomes[NUMA] == "passed", run.describe()
    assert run.outcomes[SPLIT] == "skipped"
    assert run.messages[SPLIT].endswith("one NUMA node: nothing to split"), run.describe()


@pytest.mark.parametrize(("moved", "outcome"), [(0, "passed"), (1, "failed")])
def test_gpus_split_five_three_fail_and_four_four_pass(run_suite, moved, outcome):
    """4 + 4 passes; GPU 4 moved to node 0 makes 5 + 3, which fails."""
    facts = node("h100")
    gpus = facts["topology"]["gpus"]
    for gpu in gpus[4 : 4 + moved]:
        gpu.update(numa_node=0, cpu_numa_nodes=[0], cpu_affinity="0-55,112-167")
    run = judged(run_suite, "h100", facts)
    assert run.outcomes[SPLIT] == outcome, run.describe()
    if outcome == "failed":
        assert says(run, SPLIT).startswith(
            "GPUs split unevenly across NUMA nodes: node 0: GPU 0, 1, 2, 3, 4 (5); "
            "node 1: GPU 5, 6, 7 (3). A card in the wrong slot"
        ), run.describe()
        assert f"(3). {ADVICE[SPLIT]}" in says(run, SPLIT)


def test_topology_that_leaves_out_a_pair_or_cannot_read_one_fails_closed(run_suite):
    facts = node("h100")
    facts["topology"]["pairs"].pop()
    run = judged(run_suite, "h100", facts)
    assert says(run, LINKED).startswith(
        "cannot judge: topology.pairs lists 27 pairs, this node's 8 GPUs have 28. Re-record the "
        "facts; `nvidia-smi topo -m` shows what NVML sees."
    ), run.describe()
    facts = node("h100")
    facts["topology"]["gpus"][5]["numa_node"] = {"error": "NVML_ERROR_NOT_SUPPORTED"}
    run = judged(run_suite, "h100", facts)
    assert says(run, NUMA).startswith(
        "cannot check: topology of 5 could not be read: {'numa_node': 'NVML_ERROR_NOT_SUPPORTED'}"
    ), run.describe()


def test_a_pcie_node_whose_pairs_all_cross_the_cpu_expects_no_p2p(run_suite):
    facts = node("l40s")
    for p in facts["topology"]["pairs"]:
        p["pcie_path"] = "SYS"
    run = judged(run_suite, "l40s", facts)
    assert run.outcomes[P2P] == "skipped", run.describe()
    assert run.messages[P2P].endswith(
        "no GPU pair here on which the class expects P2P (28 x PCIe SYS (GPU 0 <-> GPU 1, "
        "GPU 0 <-> GPU 2, GPU 0 <-> GPU 3, ...)): not through the CPU, not on GPUs without P2P"
    ), run.describe()


def test_a_split_that_differs_by_one_gpu_passes(run_suite):
    """Three NUMA nodes with 3 + 3 + 2 GPUs: as even as 8 GPUs go."""
    facts = node("h100")
    facts["topology"]["host_numa_cpus"]["2"] = "224-279"
    for gpu in facts["topology"]["gpus"]:
        node_of = gpu["index"] // 3  # 0,0,0 1,1,1 2,2
        gpu.update(numa_node=node_of, cpu_numa_nodes=[node_of])
    run = judged(run_suite, "h100", facts)
    assert run.outcomes[SPLIT] == "passed", run.describe()
