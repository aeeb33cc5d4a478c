"""The coverage campaign's parts: its statistics, its injections as rigcheck's probes read them
(through pynvml over nvml_sim and the kernel-log reader), and its gate."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from rigcheck.testing.coverage import corpus, measurements
from rigcheck.testing.coverage.campaign import weighted, wilson
from rigcheck.testing.coverage.gate import regressions
from rigcheck.testing.coverage.judge import failed_checks, node_snapshot, unjudged_checks
from rigcheck.testing.coverage.model import families, load_model
from rigcheck.testing.coverage.node import healthy_node, inject
from rigcheck.testing.coverage.page import page

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("hits", "trials", "low", "high"),
    # Newcombe, "Two-sided confidence intervals for the single proportion: comparison of seven
    # methods", Statistics in Medicine 17 (1998) 857-872, Table I, method 3 (Wilson score).
    [
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_interval(hits, trials, low, high):
    got = wilson(hits, trials)
    assert got == pytest.approx((low, high), abs=5e-4)


@pytest.mark.parametrize("family", ["nvidia", "amd", "host"])
def test_every_cause_has_a_signature_or_says_why_not(family):
    causes, signatures, _ = load_model(family)
    assert sum(c.share for c in causes) == 419  # Llama 3, Table 5: unexpected interruptions
    for cause in causes:
        assert bool(cause.signatures) != bool(cause.why_not), cause.name
        for name in cause.signatures:
            assert family in families(signatures[name]), name
    for name, signature in signatures.items():
        assert "https://" in signature["doc"], name


def test_each_family_sees_its_own_signatures():
    seen = {f: {c.name for c in load_model(f)[0] if c.signatures} for f in ("nvidia", "amd")}
    assert seen["nvidia"] - seen["amd"] == {"gsp"}  # why_not_on says why (sdc: the burn-in)
    assert not [c for c in load_model("host")[0] if c.signatures]  # a cpu node has no GPU


def _snapshot(tmp_path, signature: str, seed: int = 3):
    rng = random.Random(seed)
    node = healthy_node("h100", rng)
    _, signatures, _ = load_model()
    assert inject(node, signature, signatures[signature], rng)
    return node, node_snapshot(node, tmp_path / "sys")


def test_a_healthy_node_reads_as_its_capture_with_varied_readings(tmp_path):
    snapshot = node_snapshot(healthy_node("h100", random.Random(0)), tmp_path / "sys")
    assert len(snapshot["devices"]) == 8
    assert all(d["ecc_errors"]["volatile_uncorrected"] == 0 for d in snapshot["devices"])
    temperatures = {d["temperature_c"] for d in snapshot["devices"]}
    assert len(temperatures) > 1  # drawn per GPU from the capture's GPUs, not one value


@pytest.mark.parametrize(
    ("signature", "read"),
    [
        ("hbm_uncorrected_ecc", lambda d: d["ecc_errors"]["volatile_uncorrected"] > 0),
        ("row_remap_pending", lambda d: d["remapped_rows"]["pending"] is True),
        ("hw_power_brake", lambda d: "hw_power_brake_slowdown" in d["throttle_reasons"]),
        ("pcie_link_x8", lambda d: d["pcie"]["width_max"] == 8),
        ("nvlink_link_down", lambda d: not all(link["active"] for link in d["nvlink"])),
    ],
)
def test_a_signature_reaches_the_facts_through_the_probe(tmp_path, signature, read):
    _, snapshot = _snapshot(tmp_path, signature)
    assert sum(map(read, snapshot["devices"])) == 1  # one GPU, as injected


@pytest.mark.parametrize(
    ("signature", "read"),
    [
        ("xgmi_link_down", lambda d: d["xgmi"]["up"] < 7),
        ("umc_uncorrectable_ecc", lambda d: d["ras"]["uncorrectable"] > 0),
        ("bad_pages_pending", lambda d: d["bad_pages"]["pending"] > 0),
        ("amd_power_violation", lambda d: d["amd_violation"]["active"]["ppt_power"]),
        ("amd_thermal_violation", lambda d: any(d["amd_violation"]["active"].values())),
    ],
)
def test_an_amd_signature_reaches_the_facts_through_amdsmi(tmp_path, signature, read):
    rng = random.Random(3)
    node = healthy_node("mi300x", rng)
    _, signatures, _ = load_model("amd")
    assert inject(node, signature, signatures[signature], rng)
    devices = node_snapshot(node, tmp_path / "sys")["devices"]
    assert len(devices) == 8 and sum(map(read, devices)) == 1


def test_a_cpu_node_is_the_recorded_machine_with_nothing_injected(tmp_path):
    node = healthy_node("cpu", random.Random(0))
    snapshot = node_snapshot(node, tmp_path)
    assert snapshot["origin"]["kind"] == "recorded"
    _, signatures, _ = load_model("nvidia")
    assert not inject(node, "gpu_lost", signatures["gpu_lost"], random.Random(0))


def test_a_dropped_gpu_is_one_fewer_on_the_bus(tmp_path):
    _, snapshot = _snapshot(tmp_path, "gpu_off_bus")
    assert len(snapshot["devices"]) == 7


def test_a_logged_line_names_the_nodes_gpu(tmp_path):
    _, snapshot = _snapshot(tmp_path, "gsp_xid_logged")
    buses = {d["pci"]["bus_id"].lower() for d in snapshot["devices"]}
    (event,) = [e for e in snapshot["kernel_log"]["xid_events"] if e["code"] in (119, 120)]
    assert event["bus_id"] in buses


def test_retarget_keeps_the_line_and_changes_only_the_bus():
    line = "[605633.376794] NVRM: Xid (PCI:0000:06:00): 120, GSP task exception"
    assert corpus.retarget(line, "0000:53:00.0") == (
        "[605633.376794] NVRM: Xid (PCI:0000:53:00): 120, GSP task exception"
    )


def _result(caught: int, false_fails: int) -> dict:
    missed = ["row_remap_failed"] if caught < 4 else []
    row = {"name": "hbm3", "label": "GPU HBM3 memory", "caught": caught, "runs": 4,
           "detection": caught / 4, "missed": missed}  # fmt: skip
    healthy = {"false_fails": false_fails, "failed_checks": {"x": 1}}
    plan = {"healthy": 2, "per_signature": 1}
    return {"class": "h100", "plan": plan, "seed": 0, "causes": [row], "healthy": healthy}


def test_the_gate_names_a_cause_caught_less_often_and_a_false_fail_rise():
    assert regressions(_result(4, 0), _result(4, 0)) == []
    (fell,) = regressions(_result(4, 0), _result(3, 0))
    assert fell.startswith("GPU HBM3 memory: caught 3/4, was 4/4 (missed: row_remap_failed)")
    (rose,) = regressions(_result(4, 0), _result(4, 1))
    assert rose == "healthy nodes failed 1 times, was 0 (checks: x)"


def test_weighted_detection_counts_unseen_causes_as_missed():
    rows = [
        {"share": 3, "detection": 1.0, "interval": (0.5, 1.0), "runs": 2},
        {"share": 1, "detection": 0.0, "interval": (0.0, 0.0), "runs": 0},
    ]
    result = weighted(rows)
    assert result["all"]["detection"] == 0.75
    assert result["idle_visible"]["detection"] == 1.0 and result["idle_visible"]["share"] == 3


def test_a_rerun_varies_within_the_recorded_repeats_and_a_slowdown_divides_it():
    repeats = measurements.relative_repeats()["matmul_bf16_tflops"]
    rng = random.Random(0)
    healthy = [measurements.rerun(100.0, "matmul_bf16_tflops", 1.0, rng) for _ in range(200)]
    assert 100 / max(repeats) <= min(healthy) < max(healthy) <= 100 / min(repeats)
    slowed = [measurements.rerun(100.0, "matmul_bf16_tflops", 2.0, rng) for _ in range(200)]
    assert max(slowed) <= 50 / min(repeats)


def test_a_slowdown_reaches_only_its_device_and_figures():
    slow = {"1": [("matmul_", 2.0)]}
    data = measurements.replay_file("h100", ["0", "1"], slow, random.Random(0))
    value = {(m["key"], m["device"]): m["value"][0] for m in data["measurements"]}
    assert value[("matmul_bf16_tflops", "1")] < 0.6 * value[("matmul_bf16_tflops", "0")]
    assert value[("device_copy_gbps", "1")] > 0.6 * value[("device_copy_gbps", "0")]


def test_a_figure_missing_from_the_replay_is_not_judged_nor_a_fail(tmp_path):
    junit = tmp_path / "junit.xml"
    junit.write_text(
        '<testsuites><testsuite><testcase name="test_host_link[gpu0-h2d_pinned_gbps]">'
        '<failure message="Failed: no recorded measurement of h2d_pinned_gbps for GPU 0"/>'
        '</testcase><testcase name="test_matmul_tflops[gpu1-bf16]">'
        '<failure message="Failed: GPU 1: matmul_bf16_tflops 390 below the floor"/>'
        "</testcase></testsuite></testsuites>"
    )
    assert failed_checks(junit) == ("test_matmul_tflops",)
    assert unjudged_checks(junit) == ("h2d_pinned_gbps",)


def test_the_page_has_a_cell_per_cause_and_campaign_and_says_why_not_seen():
    result = json.loads((REPO / "fixtures" / "coverage" / "h100-quick.json").read_text())
    html = page([result, result])
    rows = result["causes"]
    assert html.count("<tr>") == len(rows) + 2  # the heads, each cause, the healthy nodes
    assert html.count('title="an operator&#x27;s action, not a state of the node"') == 2
    caught = next(r for r in rows if r["name"] == "hbm3")
    assert f">{caught['caught']}/{caught['runs']}</td>" in html
    assert "<script" not in html and "http" not in html.split("</style>")[0]  # self-contained


def test_a_tier_without_measurements_for_the_class_is_one_line_and_exit_2(capsys, monkeypatch):
    from rigcheck.testing.coverage.__main__ import main

    monkeypatch.setattr(measurements, "SPEC_LEVELS", ())  # as before mi300x's levels
    assert main(["--class", "mi300x", "--tier", "standard"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no measurements of class 'mi300x'" in err
    assert "choose cpu, h100" in err


def test_a_class_without_a_levels_file_replays_its_specs_achievable_figures():
    """Only figures with an achievable level and recorded repeats of their kind: no invented
    level (b200's copy has none), no invented noise (no h2d repeats were ever timed)."""
    kind, levels, origin = measurements.class_levels("b200")
    assert (kind, origin) == ("synthetic", "expected/b200.json's achievable figures")
    assert levels["matmul_bf16_tflops"] == 1745 and "device_copy_gbps" not in levels
    assert not any(key.startswith(("h2d", "d2h", "attention")) for key in levels)
    assert measurements.measured_classes() == ["a100_40gb", "b200", "cpu", "h100", "mi300x"]


def _trace(cls: str, tmp_path, seed: int = 3):
    from rigcheck.testing.coverage import acceptance

    rng = random.Random(seed)
    devices = node_snapshot(healthy_node(cls, rng), tmp_path / "sys")["devices"]
    return acceptance, acceptance.healthy_trace(cls, devices), devices, rng


@pytest.mark.parametrize("cls", ["b200", "a100_40gb"])
def test_a_gpu_nodes_trace_is_fitted_to_it_and_passes_the_burn_in(cls, tmp_path):
    from rigcheck.burnin import judge as burn
    from rigcheck.burnin.limits import Limits
    from rigcheck.burnin.trace import trace_problem
    from rigcheck.spec import load_spec

    _, trace, devices, _ = _trace(cls, tmp_path)
    assert trace_problem(trace) is None and trace["class"] == cls
    assert [d["bus_id"] for d in trace["devices"]] == [d["pci"]["bus_id"] for d in devices]
    limits = Limits(load_spec(cls))
    checks = [burn.slowdown, burn.clock_floor, burn.temperature, burn.power, burn.throughput]
    if len(devices) > 1:  # one GPU has no node median to compare with
        checks.append(burn.clock_spread)
    for check in checks:
        assert check(trace, limits) == [], check.__name__


def test_a_burn_in_fault_starts_after_the_first_minute_on_one_gpu(tmp_path):
    from rigcheck.burnin import judge as burn
    from rigcheck.burnin.limits import Limits
    from rigcheck.spec import load_spec

    acceptance, trace, _, rng = _trace("h100", tmp_path)
    _, signatures, _ = load_model("nvidia")
    assert acceptance.inject(trace, signatures["burnin_thermal_onset"], rng)
    (found,) = burn.slowdown(trace, Limits(load_spec("h100")))
    held = [d for d in trace["devices"] if any("hw_thermal_slowdown" in r
                                               for r in d["samples"]["reasons"])]  # fmt: skip
    assert len(held) == 1 and "hw_thermal_slowdown" in found
    first = next(t for t, r in zip(held[0]["samples"]["t_s"], held[0]["samples"]["reasons"],
                                   strict=True) if "hw_thermal_slowdown" in r)  # fmt: skip
    assert first >= 70  # onset during the run, after the throughput check's baseline minute


def test_the_recorded_cpu_trace_takes_no_fault_and_a_cell_not_measurable_says_why(monkeypatch):
    from rigcheck.testing.coverage import acceptance, campaign
    from rigcheck.testing.coverage.campaign import Plan, run

    trace = acceptance.healthy_trace("cpu", [])
    assert trace["origin"]["kind"] == "live"  # recorded by the real burn-in, replayed as is
    assert not acceptance.inject(trace, {"kind": "burnin_xid"}, random.Random(0))
    assert acceptance.NOT_MEASURABLE == {}  # mi300x's was, before its burn-in read amdsmi
    monkeypatch.setitem(campaign.NOT_MEASURABLE, "mi300x", "no burn-in for this class")
    result = run(Plan("mi300x", "acceptance", healthy=3, per_signature=1))
    assert result["not_measurable"] == "no burn-in for this class"
    assert result["healthy"]["runs"] == 0 and not any(r["runs"] for r in result["causes"])
    assert page([result]).count("not measurable here") == len(result["causes"]) + 1  # + headline
