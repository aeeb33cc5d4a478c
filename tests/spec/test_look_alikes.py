"""Look-alike GPUs (issue 29): each is told apart by facts rigcheck reads, detection names the
right class, and a look-alike's snapshot is refused with a message naming both products.

Pure functions on the fixtures' snapshots: no pytest replay, so this adds well under a second.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from rigcheck.cli import main
from rigcheck.detect import detect_class, identity_problems
from rigcheck.facts import Facts
from rigcheck.look_alikes import CLASS_PAIRS, NOT_A_CLASS, mistaken_for, pair_difference
from rigcheck.spec import load_all
from rigcheck.testing.synthetic_boards import NEW_BOARDS

SNAPSHOTS = Path(__file__).resolve().parents[2] / "fixtures" / "snapshots"
SPECS = load_all()
NEW_CLASSES = list(NEW_BOARDS)  # the classes issue 29 added


def snapshot(name: str) -> dict:
    return json.loads((SNAPSHOTS / f"{name}.json").read_text())


def first_device(name: str) -> dict:
    return snapshot(name)["devices"][0]


def look_alike_snapshot(alike) -> dict:
    """The resembled class's good snapshot with every GPU renamed and re-identified as `alike`."""
    data = copy.deepcopy(snapshot(alike.resembles))
    for device in data["devices"]:
        device["name"] = alike.product
        device["pci"]["device_id"] = alike.pci_device_id
    return data


@pytest.mark.parametrize("name", NEW_CLASSES)
def test_detect_names_each_new_class_on_its_snapshot(name):
    found, how = detect_class(Facts(snapshot(name)), SPECS)
    assert found == name, how
    assert how.endswith(f"matches expected/{name}.json")


@pytest.mark.parametrize(("one", "other", "differs"), CLASS_PAIRS, ids=[p[0] for p in CLASS_PAIRS])
def test_look_alike_classes_differ_in_facts_rigcheck_reads(one, other, differs):
    """PCI id always, and at least one more fact a healthy board reports: memory, compute
    capability or power limit, so a snapshot with a wrong id alone would not pass for the other."""
    a, b = first_device(one), first_device(other)
    assert a["pci"]["device_id"] != b["pci"]["device_id"]
    others = [
        a.get(k) != b.get(k) for k in ("memory_total_bytes", "compute_capability", "gcn_arch")
    ]
    power = (a.get("power") or a.get("power_cap"), b.get("power") or b.get("power_cap"))
    assert any(others) or power[0] != power[1], f"{one} and {other} differ only by PCI id"
    assert a["pci"]["device_id"] in differs and b["pci"]["device_id"] in differs


@pytest.mark.parametrize(("one", "other"), [(p[0], p[1]) for p in CLASS_PAIRS]
                         + [(p[1], p[0]) for p in CLASS_PAIRS])  # fmt: skip
def test_a_look_alike_class_is_refused_naming_both(one, other):
    """`rigcheck check OTHER` on ONE's machine fails identity naming both boards and the class
    to run instead."""
    problems = identity_problems(Facts(snapshot(one)), SPECS[other], SPECS)
    assert problems, f"{one}'s snapshot passed {other}'s identity check"
    found = first_device(one)
    for problem in problems:
        assert SPECS[other].title in problem and found["name"] in problem
        assert f"class {one}, a look-alike of {other}" in problem
        assert f"check it as {one}" in problem


@pytest.mark.parametrize("alike", NOT_A_CLASS, ids=[a.product for a in NOT_A_CLASS])
def test_detect_refuses_a_classless_look_alike_naming_both(alike):
    found, how = detect_class(Facts(look_alike_snapshot(alike)), SPECS)
    assert found is None
    assert f"{alike.product} (PCI {alike.pci_device_id}) matches no class" in how
    assert f"{alike.product} looks like class {alike.resembles} but is not: {alike.differs}" in how


@pytest.mark.parametrize("alike", NOT_A_CLASS, ids=[a.product for a in NOT_A_CLASS])
def test_checking_a_classless_look_alike_as_its_twin_names_both(alike):
    problems = identity_problems(Facts(look_alike_snapshot(alike)), SPECS[alike.resembles], SPECS)
    assert problems
    for problem in problems:
        assert SPECS[alike.resembles].title in problem
        assert f"found {alike.product} (PCI {alike.pci_device_id}): a look-alike of " in problem
        assert f"{alike.resembles}, not one ({alike.differs})" in problem


def test_rigcheck_detect_on_a_look_alike_exits_1_naming_both(tmp_path, capsys):
    a10 = next(a for a in NOT_A_CLASS if a.resembles == "a10g")
    path = tmp_path / "a10.json"
    Facts(look_alike_snapshot(a10)).save(path)
    assert main(["detect", "--facts", str(path)]) == 1
    err = capsys.readouterr().err
    assert "no class: 1 x NVIDIA A10 (PCI 0x2236) matches no class" in err
    assert "NVIDIA A10 looks like class a10g but is not: PCI id 0x2236" in err


def test_rigcheck_detect_names_the_class_of_a_look_alike_class(tmp_path, capsys):
    path = tmp_path / "l40.json"
    Facts(snapshot("l40")).save(path)
    assert main(["detect", "--facts", str(path)]) == 0
    assert capsys.readouterr().out.strip() == "l40"


def test_the_messages_in_full():
    """Exact wording, so a changed or dropped part of the message is caught."""
    device = {"name": "NVIDIA A10", "pci": {"device_id": "0x2236"}}
    assert mistaken_for(device, "a10g", None) == (
        ": a look-alike of a10g, not one (PCI id 0x2236, not the A10G's "
        "0x2237: the 150 W A10 has other tensor rates than AWS's 300 W A10G)"
    )
    assert mistaken_for(device, "h100", None) == ""
    l40 = {"name": "NVIDIA L40", "pci": {"device_id": "0x26b5"}}
    assert mistaken_for(l40, "l40s", "l40") == (
        f": class l40, a look-alike of l40s ({pair_difference('l40', 'l40s')}); check it as l40"
    )
    assert mistaken_for(l40, "h100", "l40") == ": that is class l40; check it as l40"
    assert pair_difference("l40s", "l40") == pair_difference("l40", "l40s")
    assert pair_difference("l40", "h100") is None


def test_an_unrelated_wrong_board_is_named_with_its_class():
    (problem,) = identity_problems(Facts({"devices": [first_device("a100")]}), SPECS["h100"], SPECS)
    assert problem.endswith(
        "found NVIDIA A100-SXM4-80GB (PCI 0x20B2): that is class a100; check it as a100"
    )
