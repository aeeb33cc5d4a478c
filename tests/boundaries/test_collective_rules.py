"""The distributed suite decides on every rank, every direction and every op: one rank's or one
direction's failure fails the check and is named; the bus-bandwidth and peer-copy floors of
every class (expected/*.json) are judged just below, at and just above.

Collective results are the healthy recorded HGX H100 node (fixtures/distributed/) with one
thing changed per case, replayed through suites/distributed with --collectives."""

from __future__ import annotations

import copy
import json
import statistics
from pathlib import Path

import pytest
from class_turns import this_turn

from rigcheck.distributed.measure import BUSBW_FACTOR
from rigcheck.distributed.results import OPS, CollectiveRun, CollectivesError
from rigcheck.spec import load_spec, spec_dir
from rigcheck.testing.synthetic import synthetic_snapshot
from rigcheck.verdict import FAIL, judge

HEALTHY = Path(__file__).resolve().parents[2] / "fixtures" / "distributed" / "h100_8x_nvswitch"
H100_ARGS = ("-m", "h100 and distributed", "--gpus", "8")
EPS = 1e-6
RANKS = range(8)


def healthy() -> tuple[dict, dict]:
    """(facts, collectives) of the healthy 8x H100 node."""
    return tuple(json.loads((HEALTHY / f).read_text()) for f in ("facts.json", "collectives.json"))


def pair_of(bundle: dict, a: int, b: int) -> dict:
    return next(p for p in bundle["ranks"][0]["p2p"]["pairs"] if p["gpus"] == [a, b])


def failed(run) -> dict[str, str]:
    return {n: run.messages[n] for n, o in run.outcomes.items() if o == "failed"}


# ---- every rank ----


@pytest.mark.parametrize("rank", RANKS)
def test_one_rank_wrong_fails_every_check_it_touches_and_names_it(run_suite, rank):
    facts, bundle = healthy()
    entry = bundle["ranks"][rank]
    entry["init"]["ok"] = False
    entry["allreduce_check"].update(
        ok=False, wrong=3, first_wrong={"index": 11, "got": 5.0, "expected": 36.0}
    )
    entry["allreduce"]["verified"] = False
    entry["allgather"]["verified"] = False
    entry["reducescatter"]["verified"] = False
    entry["nccl"]["effective"]["NCCL_P2P_DISABLE"] = "1"
    run = run_suite("distributed", *H100_ARGS, facts=facts, collectives=bundle)
    who = f"rank {rank} (GPU {rank})"
    messages = failed(run)
    assert set(messages) == {
        "test_process_group_started_on_every_rank",
        "test_allreduce_correct",
        "test_allgather_and_reducescatter",
        "test_nccl_p2p_not_disabled",
    }, run.describe()
    assert (
        f"process group not initialised on {who}"
        in messages["test_process_group_started_on_every_rank"]
    )
    correct = messages["test_allreduce_correct"]
    assert f"{who}: 3 of 16777216 elements wrong, first at 11: 5.0 instead of 36.0" in correct
    assert f"{who}: the timed all-reduce gave a wrong sum" in correct
    assert (
        "allgather and reducescatter gave wrong data on at least one rank"
        in messages["test_allgather_and_reducescatter"]
    )
    assert f"'{who}': 'NCCL_P2P_DISABLE=1'" in messages["test_nccl_p2p_not_disabled"]
    others = [f"rank {r} (GPU {r})" for r in RANKS if r != rank]
    assert not any(o in correct for o in others), correct


@pytest.mark.parametrize("op", ["allgather", "reducescatter"])
def test_one_op_wrong_on_the_last_rank_names_that_op(run_suite, op):
    facts, bundle = healthy()
    bundle["ranks"][7][op]["verified"] = False
    run = run_suite("distributed", *H100_ARGS, "-k", "allgather", facts=facts, collectives=bundle)
    assert set(failed(run)) == {"test_allgather_and_reducescatter"}, run.describe()
    message = run.messages["test_allgather_and_reducescatter"]
    assert f"{op} gave wrong data on at least one rank" in message
    assert " and " not in message.split(" gave")[0]


@pytest.mark.parametrize("level", ["LOC", "loc", "0"])
def test_p2p_level_loc_on_one_rank_is_p2p_off(run_suite, level):
    facts, bundle = healthy()
    bundle["ranks"][6]["nccl"]["effective"]["NCCL_P2P_LEVEL"] = level
    run = run_suite("distributed", *H100_ARGS, "-k", "p2p_not", facts=facts, collectives=bundle)
    assert set(failed(run)) == {"test_nccl_p2p_not_disabled"}, run.describe()
    assert (
        f"'rank 6 (GPU 6)': 'NCCL_P2P_LEVEL={level}'" in run.messages["test_nccl_p2p_not_disabled"]
    )


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("rank", [0, 7])
def test_a_rank_without_an_op_result_is_an_error_not_a_skip(op, rank):
    _, bundle = healthy()
    del bundle["ranks"][rank][op]
    run = CollectiveRun("recorded.json", {r["rank"]: r for r in bundle["ranks"]})
    with pytest.raises(CollectivesError, match=rf"rank {rank} \(GPU {rank}\) has no {op} result"):
        run.bandwidth(op)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("rank", [0, 7])
def test_one_rank_unverified_makes_the_op_unverified(op, rank):
    _, bundle = healthy()
    run = CollectiveRun("recorded.json", {r["rank"]: r for r in bundle["ranks"]})
    assert run.bandwidth(op).verified is True
    bundle["ranks"][rank][op]["verified"] = False
    assert run.bandwidth(op).verified is False
    del bundle["ranks"][rank][op]["verified"]  # a result that does not say is not verified
    assert run.bandwidth(op).verified is False


@pytest.mark.parametrize("op", OPS)
def test_ranks_of_different_speeds_average_their_times(op):
    """nccl-tests' convention: the ranks' times are averaged, so one slow rank lowers the
    figure for all, and a rank's skip is the op's skip."""
    _, bundle = healthy()
    for entry in bundle["ranks"]:
        entry[op]["median_s"] = 0.1
    bundle["ranks"][5][op]["median_s"] = 0.9  # one rank 9x slower
    run = CollectiveRun("recorded.json", {r["rank"]: r for r in bundle["ranks"]})
    bw = run.bandwidth(op)
    nbytes = bundle["ranks"][0][op]["bytes"]
    assert bw.seconds == pytest.approx(statistics.fmean([0.1] * 7 + [0.9]))
    assert (bw.op, bw.nbytes, bw.world) == (op, nbytes, 8)
    assert bw.algbw_gbps == pytest.approx(nbytes / 0.2 / 1e9)
    assert bw.busbw_gbps == pytest.approx(bw.algbw_gbps * BUSBW_FACTOR[op](8))
    bundle["ranks"][3][op] = {"skipped": "one rank: nothing to reduce"}
    assert run.bandwidth(op) == "one rank: nothing to reduce"


def test_one_slow_rank_pulls_the_node_under_the_all_reduce_floor(run_suite):
    facts, bundle = healthy()
    bundle["ranks"][2]["allreduce"]["median_s"] *= 8  # the others' times are unchanged
    run = run_suite("distributed", *H100_ARGS, "-k", "bus_band", facts=facts, collectives=bundle)
    assert set(failed(run)) == {"test_allreduce_bus_bandwidth"}, run.describe()
    message = run.messages["test_allreduce_bus_bandwidth"]
    assert "all-reduce bus bandwidth below the floor: measured" in message
    assert "(floor 384.0," in message and "8 ranks, 8.00 GiB float32" in message


# ---- every direction ----


def test_one_direction_of_a_pair_fails_the_pair(run_suite):
    facts, bundle = healthy()
    pair_of(bundle, 0, 1)["peer_access"]["a_to_b"] = False
    pair_of(bundle, 2, 3)["peer_access"]["b_to_a"] = False
    pair_of(bundle, 3, 5)["unidir_gbps"]["a_to_b"] = 150.0
    pair_of(bundle, 1, 6)["unidir_gbps"]["b_to_a"] = 150.0
    pair_of(bundle, 4, 7)["verified"] = False
    run = run_suite("distributed", *H100_ARGS, facts=facts, collectives=bundle)
    assert set(failed(run)) == {
        "test_peer_access_where_expected",
        "test_no_slow_gpu_pair",
        "test_peer_copies_verified",
    }, run.describe()
    access = run.messages["test_peer_access_where_expected"]
    assert "GPU 0 <-> GPU 1 (NV18 through NVSwitch): {'a_to_b': False, 'b_to_a': True}" in access
    assert "GPU 2 <-> GPU 3 (NV18 through NVSwitch): {'a_to_b': True, 'b_to_a': False}" in access
    slow = run.messages["test_no_slow_gpu_pair"]
    assert "GPU 3 <-> GPU 5: 150 GB/s, others 382" in slow
    assert "GPU 1 <-> GPU 6: 150 GB/s, others 382" in slow
    assert "GPU 0 <-> GPU 1" not in slow
    assert (
        "peer copies delivered wrong data: GPU 4 <-> GPU 7."
        in run.messages["test_peer_copies_verified"]
    )


@pytest.mark.parametrize(("ratio", "slow"), [(0.75, False), (0.7499, True)])
def test_a_pair_at_three_quarters_of_its_peers_is_not_slow_and_just_under_is(
    run_suite, ratio, slow
):
    facts, bundle = healthy()
    for pair in bundle["ranks"][0]["p2p"]["pairs"]:
        pair["unidir_gbps"] = {"a_to_b": 400.0, "b_to_a": 400.0}
    pair_of(bundle, 2, 6)["unidir_gbps"]["b_to_a"] = 400.0 * ratio
    run = run_suite("distributed", *H100_ARGS, "-k", "slow", facts=facts, collectives=bundle)
    assert run.outcomes["test_no_slow_gpu_pair"] == ("failed" if slow else "passed"), run.describe()


# ---- a 2-GPU NVLink node ----


def two_gpu_node() -> tuple[dict, dict]:
    """The healthy node cut to its first two GPUs: ranks, progress, pairs and topology."""
    facts, bundle = healthy()
    facts["devices"] = facts["devices"][:2]
    facts["topology"]["gpus"] = facts["topology"]["gpus"][:2]
    facts["topology"]["pairs"] = [p for p in facts["topology"]["pairs"] if p["gpus"] == [0, 1]]
    for key in ("ranks", "progress"):
        bundle[key] = bundle[key][:2]
        for entry in bundle[key]:
            entry["world_size"] = entry["local_world_size"] = 2
    p2p = bundle["ranks"][0]["p2p"]
    p2p["devices"] = p2p["devices"][:2]
    p2p["pairs"] = [pair_of(bundle, 0, 1)]
    return facts, bundle


def test_a_two_gpu_nvlink_node_judges_its_one_pair(run_suite):
    facts, bundle = two_gpu_node()
    args = ("-m", "h100 and distributed", "--gpus", "2", "-k", "peer or pair or started")
    run = run_suite("distributed", *args, facts=facts, collectives=bundle)
    assert not failed(run), run.describe()
    assert run.outcomes["test_peer_copy_bandwidth"] == "passed", run.describe()
    pair_of(bundle, 0, 1)["peer_access"]["b_to_a"] = False
    pair_of(bundle, 0, 1)["unidir_gbps"]["a_to_b"] = 100.0
    run = run_suite("distributed", *args, facts=facts, collectives=bundle)
    assert set(failed(run)) == {
        "test_peer_access_where_expected",
        "test_peer_copy_bandwidth",
    }, run.describe()
    assert (
        "GPU 0 <-> GPU 1 (NV18 through NVSwitch)" in run.messages["test_peer_access_where_expected"]
    )
    assert (
        "median of 1 GPU pairs) below the floor: measured 100.0 GB/s"
        in run.messages["test_peer_copy_bandwidth"]
    )


def test_a_two_gpu_job_on_an_eight_gpu_node_is_short_of_ranks(run_suite):
    facts, _ = healthy()
    _, bundle = two_gpu_node()
    run = run_suite("distributed", *H100_ARGS, "-k", "started", facts=facts, collectives=bundle)
    assert (
        "ranks per node differ from the 8 GPUs of this node: {'hgx-h100-01': 2}. torchrun's "
        "--nproc_per_node must be the number of GPUs.\nassert not"
        in (run.messages["test_process_group_started_on_every_rank"])
    ), run.describe()


# ---- the floors of every class ----


def classes_with(key: str) -> list[str]:
    names = sorted(p.stem for p in spec_dir().glob("*.json") if p.stem != "spec.schema")
    return [n for n in names if (load_spec(n).figures.get(key) or {}).get("floor")]


def with_busbw(bundle: dict, busbw: float) -> dict:
    """Every rank's all-reduce timed so that the node's bus bandwidth is `busbw`."""
    bundle = copy.deepcopy(bundle)
    world = len(bundle["ranks"])
    for entry in bundle["ranks"]:
        timed = entry["allreduce"]
        timed["median_s"] = timed["bytes"] * BUSBW_FACTOR["allreduce"](world) / (busbw * 1e9)
    return bundle


def with_unidir(bundle: dict, gbps: float) -> dict:
    bundle = copy.deepcopy(bundle)
    for pair in bundle["ranks"][0]["p2p"]["pairs"]:
        pair["unidir_gbps"] = {"a_to_b": gbps, "b_to_a": gbps}
    return bundle


def cpu_job() -> dict:
    """Two gloo ranks on one host, from the healthy node's first two ranks."""
    _, bundle = two_gpu_node()
    for entry in bundle["ranks"]:
        entry.update(backend="gloo", device={"kind": "cpu"})
        entry.pop("p2p", None)  # gloo on CPU: no peer copies
    for entry in bundle["progress"]:
        entry["device"] = {"kind": "cpu"}
    return bundle


# One turn of the classes per run (tests/class_turns.py): every class over four commits.
@pytest.mark.parametrize("name", this_turn(classes_with("allreduce_busbw_gbps")))
def test_all_reduce_floor_of_every_class(run_suite, name):
    spec = load_spec(name)
    figure = spec.figures["allreduce_busbw_gbps"]
    floor = figure["floor"]["value"]
    assert judge("allreduce_busbw_gbps", floor, figure).verdict != FAIL  # at the floor
    if spec.backend == "cpu":
        facts, bundle, args = synthetic_snapshot(spec), cpu_job(), ("-m", "cpu and distributed")
    else:
        facts, bundle = synthetic_snapshot(spec, gpus=8), healthy()[1]
        args = ("-m", f"{name} and distributed", "--gpus", "8")
    args = (*args, "-k", "bus_bandwidth")
    below = run_suite(
        "distributed", *args, facts=facts, collectives=with_busbw(bundle, floor * (1 - EPS))
    )
    assert below.outcomes["test_allreduce_bus_bandwidth"] == "failed", below.describe()
    assert (
        "all-reduce bus bandwidth below the floor" in below.messages["test_allreduce_bus_bandwidth"]
    )
    above = run_suite(
        "distributed", *args, facts=facts, collectives=with_busbw(bundle, floor * (1 + EPS))
    )
    assert above.outcomes["test_allreduce_bus_bandwidth"] == "passed", above.describe()
    assert above.judgements["test_allreduce_bus_bandwidth"]["floor"] == floor


@pytest.mark.parametrize("name", this_turn(classes_with("p2p_unidir_gbps")))
def test_peer_copy_floor_of_every_class(run_suite, name):
    spec = load_spec(name)
    floor = spec.figures["p2p_unidir_gbps"]["floor"]["value"]
    facts, bundle = synthetic_snapshot(spec, gpus=8), healthy()[1]
    args = ("-m", f"{name} and distributed", "--gpus", "8", "-k", "peer_copy_bandwidth")
    for value, outcome in ((floor * (1 - EPS), "failed"), (floor, "passed")):
        run = run_suite("distributed", *args, facts=facts, collectives=with_unidir(bundle, value))
        assert run.outcomes["test_peer_copy_bandwidth"] == outcome, (value, run.describe())
        assert run.judgements["test_peer_copy_bandwidth"]["measured"] == value


# ---- what each check says when it passes with a warning, skips, or cannot check ----


def scaled(bundle: dict, op: str, nbytes: int, busbw: float) -> None:
    """Every rank's `op` over `nbytes`, timed for a bus bandwidth of `busbw`."""
    world = len(bundle["ranks"])
    for entry in bundle["ranks"]:
        entry[op]["bytes"] = nbytes
        entry[op]["median_s"] = nbytes * BUSBW_FACTOR[op](world) / (busbw * 1e9)


def test_a_cpu_host_gets_gloo_advice_and_skips_what_is_nccl_or_gpu_only(run_suite):
    spec = load_spec("cpu")
    bundle = cpu_job()
    scaled(bundle, "allreduce", 64 * 2**20, 0.3)  # the floor is 0.4 GB/s
    run = run_suite("distributed", "-m", "cpu and distributed", facts=synthetic_snapshot(spec),
                    collectives=bundle)  # fmt: skip
    message = run.messages["test_allreduce_bus_bandwidth"]
    assert run.outcomes["test_allreduce_bus_bandwidth"] == "failed", run.describe()
    assert (
        "Run: 2 ranks, 64 MiB float32, algbw 0.30 GB/s, gloo; judged by allreduce_busbw_gbps."
        in (message)
    )
    assert ". On a CPU host" in message
    assert "NVLS" not in message
    skipped = {n: m for n, m in run.messages.items() if run.outcomes[n] == "skipped"}
    assert "gloo backend: NCCL is not used on this class" in skipped["test_nccl_p2p_not_disabled"]
    assert "gloo on CPU: no GPU pairs to copy between" in skipped["test_peer_copies_verified"]


def test_figures_in_the_warning_band_pass_and_say_so(run_suite):
    facts, bundle = healthy()
    scaled(bundle, "allreduce", 8 * 2**30, 400.0)  # floor 384, warns under 432
    for pair in bundle["ranks"][0]["p2p"]["pairs"]:
        pair["unidir_gbps"] = {"a_to_b": 320.0, "b_to_a": 330.0}  # floor 304, warns under 342
    run = run_suite("distributed", *H100_ARGS, "-k", "bandwidth", facts=facts, collectives=bundle)
    assert run.outcomes["test_allreduce_bus_bandwidth"] == "passed", run.describe()
    assert run.outcomes["test_peer_copy_bandwidth"] == "passed", run.describe()
    assert "all-reduce bus bandwidth more than 10% under the achievable figure: measured 400.0" in (
        run.output
    )
    assert "peer-copy bandwidth more than 10% under the achievable figure: measured 320.0" in (
        run.output
    )
    assert "NVLS used: True" in run.output and "NCCL settings: defaults" in run.output


def test_nccl_context_names_its_settings_and_the_slow_pair_advice(run_suite):
    facts, bundle = healthy()
    scaled(bundle, "allreduce", 512 * 2**20, 100.0)
    for entry in bundle["ranks"]:
        entry["nccl"]["effective"]["NCCL_ALGO"] = "Ring"
    run = run_suite("distributed", *H100_ARGS, "-k", "bus_band", facts=facts, collectives=bundle)
    message = run.messages["test_allreduce_bus_bandwidth"]
    assert "8 ranks, 512 MiB float32, algbw 57.14 GB/s, nccl 2.21.5;" in message, message
    assert "NCCL settings: {'NCCL_ALGO': 'Ring'}" in message
    assert "Look for a slow pair (test_no_slow_gpu_pair)" in message


def test_peer_checks_without_peer_copies_fail_or_skip_with_the_reason(run_suite):
    facts, bundle = healthy()
    del bundle["ranks"][0]["p2p"]
    run = run_suite("distributed", *H100_ARGS, "-k", "peer", facts=facts, collectives=bundle)
    assert set(failed(run)) == {
        "test_peer_access_where_expected",
        "test_peer_copies_verified",
        "test_peer_copy_bandwidth",
    }, run.describe()
    for message in failed(run).values():
        assert "cannot check: no rank recorded peer copies (local rank 0 runs them)" in message
    bundle["ranks"][0]["p2p"] = {"skipped": "one visible GPU"}
    run = run_suite("distributed", *H100_ARGS, "-k", "peer", facts=facts, collectives=bundle)
    assert set(run.outcomes.values()) == {"skipped"}, run.describe()
    assert "no GPU pair to measure: one visible GPU" in run.messages["test_peer_copies_verified"]


def test_a_socket_interface_that_exists_passes_and_none_set_skips(run_suite):
    facts, bundle = healthy()
    args = (*H100_ARGS, "-k", "socket")
    run = run_suite("distributed", *args, facts=facts, collectives=bundle)
    assert "NCCL_SOCKET_IFNAME not set" in run.messages["test_nccl_socket_interface_exists"]
    for entry in bundle["ranks"]:
        entry["nccl"]["effective"]["NCCL_SOCKET_IFNAME"] = "eth"
    run = run_suite("distributed", *args, facts=facts, collectives=bundle)
    assert run.outcomes["test_nccl_socket_interface_exists"] == "passed", run.describe()
    bundle["ranks"][4]["interfaces"] = ["ens5", "lo"]
    run = run_suite("distributed", *args, facts=facts, collectives=bundle)
    assert (
        "rank 4 (GPU 4) on hgx-h100-01: NCCL_SOCKET_IFNAME=eth matches none of ens5, lo. Set it"
        in run.messages["test_nccl_socket_interface_exists"]
    ), run.describe()


def test_every_collective_failure_says_what_to_do(run_suite):
    """One node with every collective defect at once: each check's whole advice is there."""
    facts, bundle = healthy()
    entry = bundle["ranks"][2]
    entry["allreduce_check"].update(
        ok=False, wrong=1, first_wrong={"index": 0, "got": 1.0, "expected": 2.0}
    )
    entry["nccl"]["effective"].update(NCCL_P2P_DISABLE="1", NCCL_SOCKET_IFNAME="ib9")
    pair_of(bundle, 0, 1)["peer_access"]["a_to_b"] = False
    pair_of(bundle, 0, 1)["verified"] = False
    pair_of(bundle, 4, 5)["unidir_gbps"]["a_to_b"] = 50.0
    scaled(bundle, "allreduce", 8 * 2**30, 100.0)
    for pair in bundle["ranks"][0]["p2p"]["pairs"]:
        pair["unidir_gbps"]["b_to_a"] = 200.0  # every pair under the floor of 304 one way
    run = run_suite("distributed", *H100_ARGS, facts=facts, collectives=bundle)
    expected = {
        "test_allreduce_correct": [
            "all-reduce gave wrong results: rank 2 (GPU 2): 1 of 16777216 elements wrong, first "
            "at 0: 1.0 instead of 2.0. Silent data corruption in a collective poisons every "
            "gradient: drain the node; check `dmesg` for Xid errors and run `dcgmi diag -r 3`."
        ],
        "test_allreduce_bus_bandwidth": [
            "all-reduce bus bandwidth below the floor: measured 100.0 GB/s (floor 384.0, "
            "achievable 480.0, datasheet unknown). Run: 8 ranks, 8.00 GiB float32, algbw 57.14 "
            "GB/s, nccl 2.21.5; NVLS used: True (",
            "Look for a slow pair (test_no_slow_gpu_pair), NCCL_ALGO/NCCL_PROTO/NCCL_P2P_* "
            "overrides, NVLS turned off, other processes on the GPUs; compare with nccl-tests "
            "`all_reduce_perf -b 8G -e 8G -g N`.",
        ],
        "test_nccl_p2p_not_disabled": [
            "NCCL P2P turned off: {'rank 2 (GPU 2)': 'NCCL_P2P_DISABLE=1'}. Every transfer then "
            "goes through host memory. Unset it (check the job's environment and /etc/nccl.conf, "
            "~/.nccl.conf); set NCCL_P2P_DISABLE=0 explicitly only where P2P is known broken, "
            "and say why."
        ],
        "test_nccl_socket_interface_exists": [
            "rank 2 (GPU 2) on hgx-h100-01: NCCL_SOCKET_IFNAME=ib9 matches none of eth0, lo. "
            "Set it to an interface `ip -br link` lists."
        ],
        "test_peer_access_where_expected": [
            "CUDA peer access denied where the class expects it: GPU 0 <-> GPU 1 (NV18 through "
            "NVSwitch): {'a_to_b': False, 'b_to_a': True}. Copies between them stage through "
            "host memory. `nvidia-smi topo -p2p rw` shows the driver's view; ACS on the PCIe "
            "switches or an IOMMU not in passthrough are the usual causes."
        ],
        "test_peer_copies_verified": [
            "peer copies delivered wrong data: GPU 0 <-> GPU 1. A link that corrupts data: drain "
            "the node and check `dmesg` for Xid errors and `nvidia-smi nvlink -e` for link errors."
        ],
        "test_no_slow_gpu_pair": [
            "GPU pairs far below their peers: GPU 4 <-> GPU 5: 50 GB/s, others 200 (median of 27 "
            "NV18 through NVSwitch pairs). A degraded link (NVLink lanes down, a PCIe link trained "
            "narrow or slow, a riser): `nvidia-smi nvlink -s`, `nvidia-smi -q -d PCIE`, "
            "`nvidia-smi topo -m`."
        ],
        "test_peer_copy_bandwidth": [
            "peer-copy bandwidth (median of 28 GPU pairs) below the floor: measured 200.0 GB/s "
            "(floor 304.0, achievable 380.0, datasheet 450.0, 44% of datasheet). Every pair slow "
            "points at P2P being off (test_p2p_where_the_class_expects_it, "
            "test_peer_access_where_expected) or at the links themselves."
        ],
    }
    assert set(failed(run)) == set(expected), run.describe()
    for name, parts in expected.items():
        for part in parts:
            assert part in run.messages[name], f"{name}: {part!r} not in\n{run.messages[name]}"


def test_a_job_that_did_not_finish_says_where_to_look(run_suite):
    facts, bundle = healthy()
    bundle["ranks"].pop(6)
    run = run_suite("distributed", *H100_ARGS, "-k", "started or correct", facts=facts,
                    collectives=bundle)  # fmt: skip
    started = run.messages["test_process_group_started_on_every_rank"]
    assert "AssertionError: the collective job did not finish on every rank:" in started, started
    assert "rank 6 (GPU 6) did not answer" in started
    assert (
        "A rank that did not answer while the others waited is the one to look at: its GPU "
        "(`nvidia-smi`, Xid errors in `dmesg`), its links, and NCCL's own log (NCCL_DEBUG=INFO)."
    ) in started
    assert "Per-rank results and progress files: " in started
    assert (
        "cannot check: the torchrun job did not finish on every rank (rank 6 (GPU 6)"
        in run.messages["test_allreduce_correct"]
    )
    assert (
        "test_process_group_started_on_every_rank has the whole story"
        in run.messages["test_allreduce_correct"]
    )


@pytest.mark.parametrize("name", ["t4", "rtx3090"])
def test_classes_without_gpu_p2p_skip_the_p2p_setting_check(run_suite, name):
    """t4 is PCIe-only (judged), rtx3090 has an optional bridge (not expected)."""
    spec = load_spec(name)
    _, bundle = healthy()
    args = ("-m", f"{name} and distributed", "--gpus", "8", "-k", "p2p_not")
    run = run_suite(
        "distributed", *args, facts=synthetic_snapshot(spec, gpus=8), collectives=bundle
    )
    outcome = run.outcomes["test_nccl_p2p_not_disabled"]
    if spec.expect("gpu_link")["type"] == "pcie_only":
        assert outcome == "passed", run.describe()
    else:
        assert outcome == "skipped", run.describe()
        assert f"{name} does not expect GPU P2P" in run.messages["test_nccl_p2p_not_disabled"]


def test_a_rank_without_its_timed_all_reduce_is_the_bandwidth_checks_finding(run_suite):
    facts, bundle = healthy()
    del bundle["ranks"][3]["allreduce"]
    args = (*H100_ARGS, "-k", "allreduce")
    run = run_suite("distributed", *args, facts=facts, collectives=bundle)
    assert run.outcomes["test_allreduce_correct"] == "passed", run.describe()
    assert "rank 3 (GPU 3) has no allreduce result" in run.messages["test_allreduce_bus_bandwidth"]


def test_pairs_without_topology_facts_are_compared_as_measured_and_recorded(run_suite):
    facts, bundle = healthy()
    del facts["topology"]  # no NVML topology: the pairs are still compared with each other
    pair_of(bundle, 2, 7)["unidir_gbps"]["a_to_b"] = 100.0
    run = run_suite("distributed", *H100_ARGS, "-k", "slow", facts=facts, collectives=bundle)
    message = run.messages["test_no_slow_gpu_pair"]
    assert "GPU 2 <-> GPU 7: 100 GB/s, others 382 (median of 27 measured pairs)" in message, (
        run.describe()
    )
    recorded = run.properties["test_no_slow_gpu_pair"]["p2p_unidir_gbps"]
    assert len(recorded) == 28 and recorded["GPU 2 <-> GPU 7"] == 100.0, recorded


def test_without_topology_facts_an_nvlink_class_still_expects_peer_access(run_suite):
    facts, bundle = healthy()
    del facts["topology"]
    pair_of(bundle, 1, 2)["peer_access"]["b_to_a"] = False
    run = run_suite("distributed", *H100_ARGS, "-k", "peer_access or allgather", facts=facts,
                    collectives=bundle)  # fmt: skip
    assert "GPU 1 <-> GPU 2 (nvlink): {'a_to_b': True, 'b_to_a': False}" in run.messages.get(
        "test_peer_access_where_expected", ""
    ), run.describe()
    recorded = run.properties["test_allgather_and_reducescatter"]
    bw = run_of_bundle(bundle).bandwidth("allgather")
    assert recorded["allgather_busbw_gbps"] == round(bw.busbw_gbps, 2)
    assert recorded["reducescatter_algbw_gbps"] == round(
        run_of_bundle(bundle).bandwidth("reducescatter").algbw_gbps, 2
    )


def run_of_bundle(bundle: dict) -> CollectiveRun:
    return CollectiveRun("x", {r["rank"]: r for r in bundle["ranks"]})


def test_a_rocm_node_with_too_few_ranks_fails(run_suite):
    spec = load_spec("mi300x")
    _, bundle = two_gpu_node()
    run = run_suite("distributed", "-m", "mi300x and distributed", "--gpus", "8", "-k", "started",
                    facts=synthetic_snapshot(spec, gpus=8), collectives=bundle)  # fmt: skip
    assert "ranks per node differ from the 8 GPUs of this node" in run.messages.get(
        "test_process_group_started_on_every_rank", ""
    ), run.describe()
