"""Each amdsmi fact holds exactly the field of amdsmi.h it names: the MI300X profile with every
number distinct (rigcheck/testing/amdsmi_sim/distinct.py), read through every amdsmi release
(the installed 7.0.2 and, with $RIGCHECK_AMDSMI_RELEASES, ROCm 6.0 ... 6.4's), as the probe reads
it. The swaps at the end show that a probe reading a field's neighbour fails here."""

from __future__ import annotations

import pytest
from amd_real import RELEASES
from hypothesis import Phase, given, settings

from rigcheck.facts.amd import smi
from rigcheck.facts.amd.smi import PCIE_GEN
from rigcheck.testing.amdsmi_sim import import_amdsmi
from rigcheck.testing.amdsmi_sim.distinct import distinct_node, numbered_node
from rigcheck.testing.distinct import get, swapped

BUSES = ["0000:0c:00.0", "0000:22:00.0"]
NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)  # the message names each wrong fact
ROCM_60 = (6, 1)  # releases before this one have no amdsmi_get_pcie_info (smi_releases.py)


def watts(*path):
    return lambda d: get(d, path) / 1e6


def gen(*path):
    return lambda d: PCIE_GEN[get(d, path)]


def at(*path):
    return lambda d: get(d, path)


# fact (a path in the device's record) -> (amdsmi.h's struct and field, its profile value)
FIELDS = {
    "ras.correctable": (
        "amdsmi_error_count_t.correctable_count",
        at("ecc_total", "correctable_count"),
    ),
    "ras.uncorrectable": (
        "amdsmi_error_count_t.uncorrectable_count",
        at("ecc_total", "uncorrectable_count"),
    ),
    "ras.deferred": ("amdsmi_error_count_t.deferred_count", at("ecc_total", "deferred_count")),
    "power_cap.cap_w": ("amdsmi_power_cap_info_t.power_cap", watts("power_cap", "power_cap")),
    "power_cap.default_w": (
        "amdsmi_power_cap_info_t.default_power_cap",
        watts("power_cap", "default_power_cap"),
    ),
    "power_cap.max_w": (
        "amdsmi_power_cap_info_t.max_power_cap",
        watts("power_cap", "max_power_cap"),
    ),
    "pcie_link.gen_current": (
        "amdsmi_pcie_info_t.pcie_metric.pcie_speed",
        gen("pcie", "pcie_metric", "pcie_speed"),
    ),
    "pcie_link.gen_max": (
        "amdsmi_pcie_info_t.pcie_static.max_pcie_speed",
        gen("pcie", "pcie_static", "max_pcie_speed"),
    ),
    "pcie_link.width_current": (
        "amdsmi_pcie_info_t.pcie_metric.pcie_width",
        at("pcie", "pcie_metric", "pcie_width"),
    ),
    "pcie_link.width_max": (
        "amdsmi_pcie_info_t.pcie_static.max_pcie_width",
        at("pcie", "pcie_static", "max_pcie_width"),
    ),
    "pcie_link.replays": (
        "amdsmi_pcie_info_t.pcie_metric.pcie_replay_count",
        at("pcie", "pcie_metric", "pcie_replay_count"),
    ),
    "pcie_link.recoveries": (
        "amdsmi_pcie_info_t.pcie_metric.pcie_l0_to_recovery_count",
        at("pcie", "pcie_metric", "pcie_l0_to_recovery_count"),
    ),
    "pcie_link.nak_sent": (
        "amdsmi_pcie_info_t.pcie_metric.pcie_nak_sent_count",
        at("pcie", "pcie_metric", "pcie_nak_sent_count"),
    ),
    "pcie_link.nak_received": (
        "amdsmi_pcie_info_t.pcie_metric.pcie_nak_received_count",
        at("pcie", "pcie_metric", "pcie_nak_received_count"),
    ),
    "amd_temperature.hotspot_c": (
        "HOTSPOT, AMDSMI_TEMP_CURRENT",
        at("temperature", "HOTSPOT", "CURRENT"),
    ),
    "amd_temperature.slowdown_c": (
        "HOTSPOT, AMDSMI_TEMP_CRITICAL",
        at("temperature", "HOTSPOT", "CRITICAL"),
    ),
    "amd_temperature.shutdown_c": (
        "HOTSPOT, AMDSMI_TEMP_EMERGENCY",
        at("temperature", "HOTSPOT", "EMERGENCY"),
    ),
}
# Counters ROCm 6.0's amdsmi does not read (no amdsmi_get_pcie_info): None there.
NOT_IN_ROCM_60 = {"pcie_link.recoveries", "pcie_link.nak_sent", "pcie_link.nak_received"}


def wrong_fields(node, found: dict) -> list[str]:
    """Each fact that does not hold its amdsmi.h field, with what it holds instead."""
    wrong = []
    for device in node.devices:
        record = found[device["bdf"]]
        for fact, (field, expected) in FIELDS.items():
            want = expected(device)
            if fact == "ras.deferred" and no_deferred(node):
                want = 0  # ROCm 6.0's struct has no such field: the probe's default
            if node.release < ROCM_60 and fact in NOT_IN_ROCM_60:
                want = None
            have = get(record, tuple(fact.split(".")))
            if have != want:
                wrong.append(f"{device['bdf']} {fact}: {field} is {want!r}, found {have!r}")
        blocks = {b["block"]: b["counts"] for b in record["ras_blocks"] if b["counts"]}
        for name, counts in blocks.items():
            want = {k.removesuffix("_count"): v for k, v in device["ecc_blocks"][name].items()}
            want["deferred"] = 0 if no_deferred(node) else want["deferred"]
            if counts != want:
                wrong.append(f"{device['bdf']} ras_blocks {name}: {want}, found {counts}")
    return wrong


def no_deferred(node) -> bool:
    return "struct_amdsmi_error_count_t.deferred_count" in node.unwritten


def probe(node, release):
    module = import_amdsmi(node, path=release)
    found, _ = smi.probe_amd_health(BUSES, load=lambda: module)
    return found


@pytest.mark.parametrize("release", RELEASES)
@settings(max_examples=1, deadline=None, phases=NO_SHRINK, database=None)
@given(node=distinct_node(BUSES))
def test_every_amdsmi_fact_holds_the_field_it_names(release, node):
    assert not wrong_fields(node, probe(node, release))


SWAPS = [
    ("_counts", "correctable", "uncorrectable"),
    ("_pcie_link", "width_current", "width_max"),
    ("_pcie_link", "gen_current", "gen_max"),
    ("_power_cap", "cap_w", "default_w"),
    ("_pcie_link", "nak_sent", "nak_received"),
    ("_temperature", "slowdown_c", "shutdown_c"),
]


@pytest.mark.parametrize(
    ("function", "a", "b"), SWAPS, ids=[f"{s[0]}:{s[1]}-{s[2]}" for s in SWAPS]
)
def test_a_swapped_pair_fails_the_round_trip(function, a, b, monkeypatch):
    monkeypatch.setattr(smi, function, swapped(smi, function, a, b))

    @settings(max_examples=1, deadline=None, phases=NO_SHRINK, database=None)
    @given(node=distinct_node(BUSES))
    def round_trip(node):
        wrong = wrong_fields(node, probe(node, None))
        named = {line.split(" ")[1].rstrip(":").rsplit(".", 1)[-1] for line in wrong}
        # _counts reads every RAS block too: its swap shows there as well.
        assert {a, b} <= named and named - {a, b} <= {"ras_blocks"}, wrong

    round_trip()


def test_the_profile_leaves_swappable_pairs_equal_that_the_distinct_mode_varies():
    """The checker: the captured MI300X profile leaves pairs equal (a healthy idle GPU: no
    errors, the link at its maximum), and every such pair differs once values are distinct."""
    from rigcheck.testing.amdsmi_sim.distinct import SWAPPABLE
    from rigcheck.testing.amdsmi_sim.profiles import load_profile
    from rigcheck.testing.distinct import equal_pairs

    captured = equal_pairs(load_profile("mi300x_8gpu")["device"], SWAPPABLE)
    assert "pcie.pcie_metric.pcie_width = pcie.pcie_static.max_pcie_width = 16" in captured
    node = numbered_node(BUSES)
    assert [equal_pairs(d, SWAPPABLE) for d in node.devices] == [[], []]
