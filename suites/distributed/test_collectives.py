"""NCCL (gloo on CPU) across every GPU of the node: it starts, it is right, it is fast enough.

One torchrun job per session (rigcheck/distributed/worker.py on every rank); these checks read
its results, or a recorded run given with --collectives=PATH. Bus bandwidth follows nccl-tests:
algbw x 2(n-1)/n for all-reduce, at one fixed size (8 GiB on GPUs).
"""

import statistics
import warnings

import pytest

from rigcheck.distributed.pairs import (
    MeasuredPair,
    NodeTopology,
    link_kind,
    p2p_expected,
    pair_label,
    slow_pairs,
)
from rigcheck.distributed.results import CollectivesError
from rigcheck.facts.fabric.nccl_env import allreduce_figure, socket_ifname_matches
from rigcheck.spec import GIB
from rigcheck.verdict import FAIL, WARN, judge, record

pytestmark = [pytest.mark.distributed, pytest.mark.slow]
DIRECT_LINKS = {"nvlink", "infinity_fabric"}  # every pair P2P, topology facts or not


def finished(run) -> None:
    """Checks that read results need every rank's; the first check says what went wrong."""
    problems = run.problems()
    if problems:
        pytest.fail(
            f"cannot check: the torchrun job did not finish on every rank ({problems[0]}); "
            "test_process_group_started_on_every_rank has the whole story",
            pytrace=False,
        )


def bandwidth_of(run, op: str):
    """The op's bandwidth over all ranks; skipped where the worker skipped it (one rank),
    failed where a rank's result lacks it."""
    try:
        bw = run.bandwidth(op)
    except CollectivesError as exc:
        pytest.fail(f"cannot check: {exc}", pytrace=False)
    if isinstance(bw, str):
        pytest.skip(f"no {op} bandwidth: {bw}")
    return bw


def nccl_only(run) -> None:
    if run.backend != "nccl":
        pytest.skip(f"{run.backend} backend: NCCL is not used on this class")


def peer_results(run):
    """(host, its peer-copy results), skipped where no GPU pair was measured."""
    if run.backend != "nccl":
        pytest.skip(f"{run.backend} on CPU: no GPU pairs to copy between")
    hosts = run.p2p()
    if not hosts:
        pytest.fail(
            "cannot check: no rank recorded peer copies (local rank 0 runs them)", pytrace=False
        )
    measured = [(host, p2p) for host, p2p in hosts if "skipped" not in p2p]
    if not measured:
        pytest.skip(f"no GPU pair to measure: {hosts[0][1]['skipped']}")
    return measured


def gpu_pairs(run, facts):
    """Every measured pair with its label, its NVML topology pair (None when unknown) and its
    unidirectional rate (the slower direction)."""
    multi_host = len(run.hosts) > 1
    here = facts.find("host.hostname")
    for host, p2p in peer_results(run):
        # The facts describe this node only: other nodes' pairs are compared without topology.
        topology = NodeTopology(facts.find("topology") if host == here or not multi_host else None)
        bus = {d["index"]: d["bus_id"] for d in p2p["devices"]}
        for pair in p2p["pairs"]:
            a, b = (topology.gpu(bus[i], i) for i in pair["gpus"])
            label = pair_label(a, b, host if multi_host else None)
            yield label, topology.pair(a, b), pair


def test_process_group_started_on_every_rank(collective_run, spec, devices):
    problems = collective_run.problems()
    assert not problems, (
        "the collective job did not finish on every rank:\n  "
        + "\n  ".join(problems)
        + f"\nPer-rank results and progress files: {collective_run.source}. A rank that did not "
        "answer while the others waited is the one to look at: its GPU (`nvidia-smi`, Xid errors "
        "in `dmesg`), its links, and NCCL's own log (NCCL_DEBUG=INFO)."
    )
    not_started = [
        collective_run.label(r["rank"])
        for r in collective_run.results()
        if not r.get("init", {}).get("ok")
    ]
    assert not not_started, f"process group not initialised on {', '.join(not_started)}"
    if spec.backend in ("cuda", "rocm"):
        per_host = {
            host: sum(r["host"] == host for r in collective_run.results())
            for host in collective_run.hosts
        }
        short = {host: n for host, n in per_host.items() if n != len(devices)}
        assert not short, (
            f"ranks per node differ from the {len(devices)} GPUs of this node: {short}. "
            "torchrun's --nproc_per_node must be the number of GPUs."
        )


def test_allreduce_correct(collective_run):
    """Exact integer check on every rank, and the timed full-size all-reduce verified too."""
    finished(collective_run)
    wrong = []
    for r in collective_run.results():
        check = r["allreduce_check"]
        if not check["ok"]:
            first = check["first_wrong"]
            wrong.append(
                f"{collective_run.label(r['rank'])}: {check['wrong']} of {check['elements']} "
                f"elements wrong, first at {first['index']}: {first['got']} instead of "
                f"{first['expected']}"
            )
        timed = r.get("allreduce", {})
        if timed.get("verified") is False:
            wrong.append(
                f"{collective_run.label(r['rank'])}: the timed all-reduce gave a wrong sum"
            )
    assert not wrong, (
        f"all-reduce gave wrong results: {'; '.join(wrong)}. Silent data corruption in a "
        "collective poisons every gradient: drain the node; check `dmesg` for Xid errors and "
        "run `dcgmi diag -r 3`."
    )


def test_allreduce_bus_bandwidth(collective_run, spec, record_property):
    """Judged by the NVLS figure, or by the class's ring figure where NCCL reports NVLS
    unavailable on the node (rigcheck.facts.fabric.nccl_env.allreduce_figure says why)."""
    finished(collective_run)
    bw = bandwidth_of(collective_run, "allreduce")
    nccl = collective_run.results()[0].get("nccl") if collective_run.backend == "nccl" else None
    key, why = allreduce_figure(collective_run.backend, nccl, spec.figures)
    judgement = judge(key, bw.busbw_gbps, spec.figures.get(key))
    record(record_property, judgement)
    record_property("allreduce_judged_by", key)
    context = f"{run_context(collective_run, bw)}; judged by {key}" + (f" ({why})" if why else "")
    record_property("allreduce_context", context)
    if judgement.verdict == FAIL:
        advice = (
            "Look for a slow pair (test_no_slow_gpu_pair), NCCL_ALGO/NCCL_PROTO/NCCL_P2P_* "
            "overrides, NVLS turned off, other processes on the GPUs; compare with nccl-tests "
            "`all_reduce_perf -b 8G -e 8G -g N`."
            if collective_run.backend == "nccl"
            else "On a CPU host: other processes competing for the cores, or a loopback that "
            "is not the fast path (GLOO_SOCKET_IFNAME)."
        )
        pytest.fail(
            f"all-reduce bus bandwidth {judgement.reason}. Run: {context}. {advice}",
            pytrace=False,
        )
    if judgement.verdict == WARN:
        warnings.warn(f"all-reduce bus bandwidth {judgement.reason}; {context}", stacklevel=1)


def run_context(run, bw) -> str:
    """What the number depends on: ranks, size, and for NCCL its version, NVLS and settings."""
    size = f"{bw.nbytes / GIB:.2f} GiB" if bw.nbytes >= GIB else f"{bw.nbytes / 2**20:.0f} MiB"
    context = f"{bw.world} ranks, {size} float32, algbw {bw.algbw_gbps:.2f} GB/s, {run.backend}"
    if run.backend != "nccl":
        return context
    nccl = run.results()[0]["nccl"]
    settings = {k: v for k, v in nccl["effective"].items() if v is not None}
    return (
        f"{context} {nccl.get('version') or '(version unknown)'}; NVLS used: "
        f"{nccl['nvls']['used']} ({nccl['nvls']['why']}); NCCL settings: {settings or 'defaults'}"
    )


def test_allgather_and_reducescatter(collective_run, record_property):
    """Reported (no class figure yet) and verified: every rank got exactly the right data."""
    finished(collective_run)
    wrong = []
    for op in ("allgather", "reducescatter"):
        bw = bandwidth_of(collective_run, op)
        record_property(f"{op}_busbw_gbps", round(bw.busbw_gbps, 2))
        record_property(f"{op}_algbw_gbps", round(bw.algbw_gbps, 2))
        if not bw.verified:
            wrong.append(op)
    assert not wrong, f"{' and '.join(wrong)} gave wrong data on at least one rank"


def test_nccl_p2p_not_disabled(collective_run, spec):
    """NCCL_P2P_DISABLE=1 or NCCL_P2P_LEVEL=LOC (environment or nccl.conf) on GPUs the class
    links for P2P costs most of the bandwidth, silently."""
    finished(collective_run)
    nccl_only(collective_run)
    if spec.expect("gpu_link")["type"] not in ("nvlink", "pcie_only", "infinity_fabric"):
        pytest.skip(f"{spec.name} does not expect GPU P2P")
    off = {}
    for r in collective_run.results():
        effective = r["nccl"]["effective"]
        if effective.get("NCCL_P2P_DISABLE") == "1":
            off[collective_run.label(r["rank"])] = "NCCL_P2P_DISABLE=1"
        elif str(effective.get("NCCL_P2P_LEVEL")).upper() in ("LOC", "0"):
            off[collective_run.label(r["rank"])] = f"NCCL_P2P_LEVEL={effective['NCCL_P2P_LEVEL']}"
    assert not off, (
        f"NCCL P2P turned off: {off}. Every transfer then goes through host memory. Unset it "
        "(check the job's environment and /etc/nccl.conf, ~/.nccl.conf); set NCCL_P2P_DISABLE=0 "
        "explicitly only where P2P is known broken, and say why."
    )


def test_nccl_socket_interface_exists(collective_run):
    """NCCL_SOCKET_IFNAME names the bootstrap interface; one that matches nothing on the host
    (the seed's eth0 on a machine with ens5) makes NCCL fail to start across nodes."""
    finished(collective_run)
    nccl_only(collective_run)
    bad = []
    for r in collective_run.results():
        value = r["nccl"]["effective"].get("NCCL_SOCKET_IFNAME")
        if not value:
            continue
        if not socket_ifname_matches(value, r["interfaces"]):
            bad.append(
                f"{collective_run.label(r['rank'])} on {r['host']}: NCCL_SOCKET_IFNAME={value} "
                f"matches none of {', '.join(r['interfaces'])}"
            )
    if not any(r["nccl"]["effective"].get("NCCL_SOCKET_IFNAME") for r in collective_run.results()):
        pytest.skip("NCCL_SOCKET_IFNAME not set: NCCL picks the interface itself")
    assert not bad, f"{'; '.join(bad)}. Set it to an interface `ip -br link` lists."


def test_peer_access_where_expected(collective_run, spec, facts):
    """torch.cuda.can_device_access_peer both ways on every pair the class links for P2P."""
    finished(collective_run)
    link = spec.expect("gpu_link")["type"]
    denied = []
    for label, topo_pair, pair in gpu_pairs(collective_run, facts):
        expected = p2p_expected(link, topo_pair) if topo_pair else link in DIRECT_LINKS
        access = pair["peer_access"]
        if expected and not (access["a_to_b"] and access["b_to_a"]):
            how = link_kind(topo_pair) if topo_pair else link
            denied.append(f"{label} ({how}): {access}")
    assert not denied, (
        f"CUDA peer access denied where the class expects it: {'; '.join(denied)}. Copies "
        "between them stage through host memory. `nvidia-smi topo -p2p rw` shows the driver's "
        "view; ACS on the PCIe switches or an IOMMU not in passthrough are the usual causes."
    )


def test_peer_copies_verified(collective_run, facts):
    finished(collective_run)
    bad = [label for label, _, pair in gpu_pairs(collective_run, facts) if not pair["verified"]]
    assert not bad, (
        f"peer copies delivered wrong data: {', '.join(bad)}. A link that corrupts data: drain "
        "the node and check `dmesg` for Xid errors and `nvidia-smi nvlink -e` for link errors."
    )


def test_no_slow_gpu_pair(collective_run, facts, record_property):
    """Each pair against the others on the same kind of path (NV18, PCIe PIX, ...): a pair
    under 0.75 x their median is named, not averaged away."""
    finished(collective_run)
    measured = []
    for label, topo_pair, pair in gpu_pairs(collective_run, facts):
        gbps = min(pair["unidir_gbps"].values())
        group = link_kind(topo_pair) if topo_pair else "measured"
        measured.append(MeasuredPair(label, group, gbps))
    record_property("p2p_unidir_gbps", {p.label: round(p.gbps, 1) for p in measured})
    slow = slow_pairs(measured)
    assert not slow, (
        f"GPU pairs far below their peers: {'; '.join(slow)}. A degraded link (NVLink lanes "
        "down, a PCIe link trained narrow or slow, a riser): `nvidia-smi nvlink -s`, "
        "`nvidia-smi -q -d PCIE`, `nvidia-smi topo -m`."
    )


def test_peer_copy_bandwidth(collective_run, spec, facts, record_property):
    """The node's median pair (unidirectional, slower direction) against the class figure;
    single slow pairs are test_no_slow_gpu_pair's."""
    finished(collective_run)
    rates = [min(p["unidir_gbps"].values()) for _, _, p in gpu_pairs(collective_run, facts)]
    median = statistics.median(rates)
    judgement = judge("p2p_unidir_gbps", median, spec.figures.get("p2p_unidir_gbps"))
    record(record_property, judgement)
    if judgement.verdict == FAIL:
        pytest.fail(
            f"peer-copy bandwidth (median of {len(rates)} GPU pairs) {judgement.reason}. "
            "Every pair slow points at P2P being off (test_p2p_where_the_class_expects_it, "
            "test_peer_access_where_expected) or at the links themselves.",
            pytrace=False,
        )
    if judgement.verdict == WARN:
        warnings.warn(f"peer-copy bandwidth {judgement.reason}", stacklevel=1)
