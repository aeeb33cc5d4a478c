"""RDMA traffic between node pairs (perftest's ib_write_bw and ib_read_lat, port to port, in
the node-pair rounds): every pair measured, no slow port, node or link, latency in bounds.

Judged by rigcheck/rdma/perftest_verdict.py against the fabric spec's perftest figures
(--fabric FILE or the class's expect.fabric) and the fleet's own reference.
"""

import warnings

import pytest

from rigcheck.rdma.perftest_verdict import (
    bandwidth_findings,
    figure,
    flap_findings,
    latency_findings,
    nothing_compared,
)

pytestmark = pytest.mark.distributed


def expected_fabric(request, spec):
    from rigcheck.plugin.fabric import FABRIC_KEY

    return request.config.stash.get(FABRIC_KEY, None) or spec.data["expect"].get("fabric")


def test_every_rdma_pair_measured(rdma_run):
    missing = rdma_run.missing()
    assert not missing, (
        f"RDMA pairs without a result: {'; '.join(missing)}. A port missing on one node, or "
        "perftest failing to connect (`ibv_devinfo`, the port's state, a firewall on the "
        "perftest TCP port 18515), leaves its links unjudged."
    )


def test_no_slow_rdma_port_node_or_link(request, spec, rdma_run):
    gpudirect = bool(rdma_run.plan.get("gpudirect"))
    floor, source = figure(expected_fabric(request, spec), gpudirect)
    unjudged = nothing_compared(rdma_run, floor)
    if unjudged:
        pytest.skip(unjudged)
    findings = bandwidth_findings(rdma_run, floor)
    memory = "GPU memory (--use_cuda)" if gpudirect else "host memory"
    against = f"floor {floor:g} Gb/s ({source})" if floor else "no site floor: the fleet only"
    assert not findings, (
        f"RDMA write bandwidth, {memory}, {against}: {'; '.join(findings)}. A slow port: reseat "
        "or replace its cable or transceiver, check its rate (`ibstat`); a slow link: the cable "
        "or the switch port between the two."
    )


def test_rdma_read_latency(request, spec, rdma_run):
    perftest = (expected_fabric(request, spec) or {}).get("perftest") or {}
    ceiling = perftest.get("read_lat_us")
    if ceiling is None:
        pytest.skip("the fabric spec has no perftest read_lat_us figure")
    findings = latency_findings(rdma_run, ceiling)
    assert not findings, (
        f"RDMA read latency: {'; '.join(findings)} ({perftest['source']}). A high tail on one "
        "link: congestion or a link retraining; compare its port counters."
    )


def test_no_rdma_link_flap_during_pairs(rdma_run):
    if not any("counters" in entry for entry in rdma_run.pairs.values()):
        pytest.skip("this RDMA pair run recorded no port counters (written by an older rigcheck)")
    failures, warned = flap_findings(rdma_run)
    if warned:
        warnings.warn(f"RDMA errors during the pair run: {'; '.join(warned)}", stacklevel=1)
    assert not failures, (
        f"RDMA links during the pair run: {'; '.join(failures)}. A link that goes down or "
        "retrains under traffic stalls every collective that crosses it: reseat or replace the "
        "cable or transceiver of that port."
    )
