"""How one node's GPUs are joined: NVLink or PCIe per pair, P2P, and where each GPU sits.

Facts from NVML (rigcheck/facts/nvidia/topology.py), read once, so a recorded snapshot is judged the
same way. Per-GPU NVLink health (links active per device) is test_health.py::test_nvlink_up;
these checks look at pairs and at NUMA placement.
"""

from collections import defaultdict
from itertools import combinations

import pytest

from rigcheck.distributed.pairs import (
    has_nvlink,
    link_kind,
    p2p_expected,
    pair_label,
    path_words,
)
from rigcheck.facts.probe import is_error
from rigcheck.require import fact

pytestmark = pytest.mark.distributed


@pytest.fixture
def link_type(spec, devices):
    """The class's GPU-GPU link, on a node with GPU pairs to judge."""
    if spec.backend == "cpu":
        pytest.skip(f"{spec.name} has no GPUs: no topology to judge")
    if spec.vendor not in ("nvidia", "amd"):  # AMD: amdsmi's, facts/amd/topology.py
        pytest.skip(f"{spec.title} has one device: no GPU pairs")
    if len(devices) < 2:
        pytest.skip("one GPU: no pair to judge (on a multi-GPU node of a 1-GPU class: --gpus N)")
    return spec.expect("gpu_link")["type"]


def readable(facts, key: str) -> list[dict]:
    """topology.<key>, failing closed when it or any entry in it could not be read, or when
    it leaves out GPUs or pairs of this node (an empty topology would pass every check)."""
    entries = fact(facts, f"topology.{key}")
    want = len(facts.devices) if key == "gpus" else len(list(combinations(facts.devices, 2)))
    if len(entries) != want:
        pytest.fail(
            f"cannot judge: topology.{key} lists {len(entries)} {key}, this node's "
            f"{len(facts.devices)} GPUs have {want}. Re-record the facts; `nvidia-smi topo -m` "
            "shows what NVML sees.",
            pytrace=False,
        )
    for entry in entries:
        broken = {k: v["error"] for k, v in entry.items() if is_error(v)}
        if broken:
            where = entry.get("gpus", entry.get("index"))
            pytest.fail(
                f"cannot check: topology of {where} could not be read: {broken}", pytrace=False
            )
    return entries


def summary(pairs: list[dict]) -> str:
    """'12 x PCIe PIX (GPU 0 <-> GPU 1, ...), 16 x PCIe SYS (...)': the node at a glance."""
    kinds = defaultdict(list)
    for p in pairs:
        kinds[link_kind(p)].append(pair_label(*p["gpus"]))
    return "; ".join(
        f"{len(labels)} x {kind} ({', '.join(labels[:3])}{', ...' if len(labels) > 3 else ''})"
        for kind, labels in kinds.items()
    )


def test_gpu_pairs_linked_as_the_class_expects(spec, facts, link_type, record_property):
    """NVSwitch nodes (HGX A100/H100/H200/B200): every pair on NVLink, with the class's link
    count. A direct NVLink mesh (DGX-1 V100) links only some pairs by design: every GPU needs an
    NVLink peer. PCIe-only classes (L40S): no pair on NVLink; the PCIe paths are recorded."""
    pairs = readable(facts, "pairs")
    record_property("gpu_pairs", summary(pairs))
    if link_type == "nvlink":
        switched = any(
            link.get("remote") == "switch"
            for gpu in readable(facts, "gpus")
            for link in gpu["nvlink"] or []
        )
        if switched:
            short = short_of_nvlink(pairs, spec.expect("gpu_link").get("links_per_device"))
            what = f"{len(short)} of {len(pairs)} GPU pairs short of NVLink"
        else:
            short, what = unlinked_gpus(pairs, facts), "GPUs without an NVLink peer (no NVSwitch)"
        assert not short, (
            f"{what}: {'; '.join(short)}. "
            "Collectives between them fall back to fewer links or to PCIe. `nvidia-smi nvlink -s` "
            "shows the links per GPU, `nvidia-smi topo -m` the pairs; on NVSwitch nodes the "
            "fabric manager must be running (`systemctl status nvidia-fabricmanager`)."
        )
    elif link_type == "pcie_only":
        linked = [f"{pair_label(*p['gpus'])}: {link_kind(p)}" for p in pairs if has_nvlink(p)]
        assert not linked, (
            f"{spec.name} has no NVLink, yet NVML reports it: {'; '.join(linked)}. This is a "
            f"different product or board than the class; run `rigcheck detect`. "
            f"Pairs: {summary(pairs)}"
        )
    else:
        pytest.skip(f"{spec.name}'s GPU link is {link_type}: no per-pair expectation")


def short_of_nvlink(pairs: list[dict], want: int | None) -> list[str]:
    short = []
    for p in pairs:
        links = p["nvlink"]["links"]
        if not links:
            short.append(f"{pair_label(*p['gpus'])}: no NVLink, PCIe {path_words(p['pcie_path'])}")
        elif want and links < want:
            short.append(f"{pair_label(*p['gpus'])}: {links} NVLinks (expected {want})")
    return short


def unlinked_gpus(pairs: list[dict], facts) -> list[str]:
    linked = {i for p in pairs if has_nvlink(p) for i in p["gpus"]}
    return [
        f"GPU {g['index']}: no NVLink to any other GPU"
        for g in readable(facts, "gpus")
        if g["index"] not in linked
    ]


def test_p2p_where_the_class_expects_it(facts, link_type, record_property):
    """P2P read and write (and over NVLink where the pair has it) on every NVLink pair, and on
    PCIe pairs below the CPU (one board, PCIe switches): through the CPU it depends on the
    chipset. A GPU NVML calls gpu_not_supported (GeForce) has no P2P to expect."""
    pairs = readable(facts, "pairs")
    expected = [p for p in pairs if p2p_expected(link_type, p)]
    record_property("p2p", {pair_label(*p["gpus"]): p["p2p"] for p in pairs})
    if not expected:
        pytest.skip(
            f"no GPU pair here on which the class expects P2P ({summary(pairs)}): not through "
            "the CPU, not on GPUs without P2P"
        )
    missing = []
    for p in expected:
        caps = ("read", "write", "nvlink") if has_nvlink(p) else ("read", "write")
        bad = [f"{cap} {p['p2p'][cap]}" for cap in caps if p["p2p"][cap] != "ok"]
        if bad:
            missing.append(f"{pair_label(*p['gpus'])} ({link_kind(p)}): {', '.join(bad)}")
    assert not missing, (
        f"P2P unavailable on {len(missing)} of {len(expected)} GPU pairs that should have it: "
        f"{'; '.join(missing)}. NCCL then stages through host memory at a fraction of the "
        "bandwidth. Check `nvidia-smi topo -p2p rw`. On PCIe switches, ACS (Access Control "
        "Services) must be off in the BIOS and the IOMMU in passthrough (iommu=pt); "
        "disabled_by_regkey means the driver was configured to refuse P2P."
    )


def test_gpu_numa_node_matches_cpu_affinity(facts, link_type):
    """Each GPU's PCI device sits on a NUMA node, and the CPUs NVML calls close to it are that
    node's: a process pinned by that affinity then works on the GPU's own socket."""
    host = fact(facts, "topology.host_numa_cpus")
    wrong = []
    for gpu in readable(facts, "gpus"):
        node, near = gpu["numa_node"], gpu["cpu_numa_nodes"]
        where = f"GPU {gpu['index']} ({gpu['bus_id']})"
        if node == -1 and len(host) > 1:
            wrong.append(f"{where}: no NUMA node (-1) on a host with {len(host)} NUMA nodes")
        elif node != -1 and node not in near:
            wrong.append(
                f"{where}: PCI device on NUMA node {node}, but its CPU affinity "
                f"{gpu['cpu_affinity']} is on node {', '.join(map(str, near)) or 'none'}"
            )
        elif len(near) > 1:
            wrong.append(f"{where}: CPU affinity {gpu['cpu_affinity']} spans NUMA nodes {near}")
    assert not wrong, (
        f"GPU NUMA placement inconsistent: {'; '.join(wrong)}. A rank pinned by this affinity "
        "puts its host buffers and NCCL's proxy threads on the far socket. Compare "
        "`nvidia-smi topo -m` (CPU and NUMA affinity) with /sys/bus/pci/devices/<bus>/numa_node; "
        "a wrong or missing node comes from the firmware (ACPI SRAT/_PXM) or a VM without "
        "NUMA passthrough."
    )


def test_gpus_split_evenly_across_numa_nodes(facts, link_type):
    """All GPUs on one socket (a single-root design) or an even split: 4 + 4, never 5 + 3."""
    host = fact(facts, "topology.host_numa_cpus")
    if len(host) < 2:
        pytest.skip("one NUMA node: nothing to split")
    by_node = defaultdict(list)
    for gpu in readable(facts, "gpus"):
        by_node[tuple(gpu["cpu_numa_nodes"])].append(gpu["index"])
    counts = [len(gpus) for gpus in by_node.values()]
    split = "; ".join(
        f"node {','.join(map(str, node)) or '?'}: GPU {', '.join(map(str, gpus))} ({len(gpus)})"
        for node, gpus in sorted(by_node.items())
    )
    assert max(counts) - min(counts) <= 1, (
        f"GPUs split unevenly across NUMA nodes: {split}. A card in the wrong slot or riser, or "
        "one that fell off the bus and came back elsewhere: the ranks on the crowded node share "
        "its PCIe root and memory bandwidth. Check `nvidia-smi topo -m` against the board's manual."
    )
