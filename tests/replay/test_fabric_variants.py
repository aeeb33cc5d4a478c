"""The fabric the fabric broken variants break (fixtures/fabric/) is what the probe reads from a
healthy fake node, and the variant format's `fabric` field replays with --fabric."""

import json

from fabric_fixture import FIXTURE, healthy_fabric, render

from rigcheck.spec import load_spec
from rigcheck.testing.variants import load_variants


def test_the_fixture_is_what_the_probe_reads_from_a_healthy_node():
    assert FIXTURE.read_text() == render(healthy_fabric()), (
        f"{FIXTURE} is stale: PYTHONPATH=.:tests/replay python tests/replay/fabric_fixture.py"
    )


def test_a_fabric_variant_adds_the_fabric_then_breaks_it_and_asks_for_its_spec():
    variant = next(v for v in load_variants() if v.name == "fabric_port_down")
    broken = variant.apply({"devices": []}, load_spec("h100"))
    port = broken["fabric"]["rdma_devices"][3]["ports"][0]
    assert (port["state"], port["phys_state"]) == ("DOWN", "Disabled")
    assert json.loads(FIXTURE.read_text())["rdma_devices"][3]["ports"][0]["state"] == "ACTIVE"
    assert variant.pytest_args()[:2] == ["--gpus", "8"]
    assert variant.pytest_args()[2].endswith("docs/fabric/dgx-h100.json")
    assert variant.pytest_args()[2].startswith("--fabric=/")
