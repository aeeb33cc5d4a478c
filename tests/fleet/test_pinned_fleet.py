"""The fleet verdict pinned where realistic bugs hide (tests/mutation/realistic/fleet.toml): a
node whose run did not finish is drained like a failed one; a host run twice counts with its
latest run, whichever order the files are found in; a drained node's reason is its first failed
check, with how many more."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from fleet_certificates import node_certificate

from rigcheck.fleet.judge import judge_fleet
from rigcheck.fleet.nodes import Node, load_nodes
from rigcheck.reports.certificate import write_certificate


def node(name: str, certificate: dict) -> Node:
    return Node(name, Path(f"/fleet/{name}/certificate.json"), certificate)


def test_a_node_whose_run_did_not_finish_is_drained():
    unfinished = node_certificate("gpu-b")
    unfinished.update(verdict="incomplete", partial=True, partial_reason="killed by SIGTERM")
    nodes = [node("gpu-a", node_certificate("gpu-a")), node("gpu-b", unfinished)]
    verdict = judge_fleet(nodes)
    assert verdict.drain == {"gpu-b": ["its run did not finish: killed by SIGTERM"]}


def test_the_reason_is_the_first_failed_check_and_how_many_more():
    certificate = node_certificate("gpu-c", fail=True)
    first = next(c for c in certificate["checks"] if c["outcome"] == "fail")
    second = copy.deepcopy(first) | {"name": "test_later", "message": "a later failure"}
    certificate["checks"].append(second)
    verdict = judge_fleet([node("gpu-c", certificate)])
    (reason,) = verdict.drain["gpu-c"]
    assert reason.startswith(f"its run failed: {first['name']}: driver 525.60.13"), reason
    assert reason.endswith("(+1 more)") and "a later failure" not in reason, reason


@pytest.mark.parametrize("latest_first", [True, False])
def test_a_host_run_twice_counts_with_its_latest_run(tmp_path, latest_first):
    old = node_certificate("gpu-d", fail=True)
    old["run"].update(id="20261119T080000Z-gpu-d", started_at="2026-11-19T08:00:00Z")
    new = node_certificate("gpu-d")
    new["run"].update(id="20261120T090000Z-gpu-d", started_at="2026-11-20T09:00:00Z")
    runs = [new, old] if latest_first else [old, new]
    for i, certificate in enumerate(runs):  # folder names set the order files are found in
        folder = tmp_path / f"{i}-{certificate['run']['id']}"
        folder.mkdir()
        write_certificate(folder / "certificate.json", certificate)
    (only,) = load_nodes([str(tmp_path)])
    assert only.certificate["run"]["started_at"] == "2026-11-20T09:00:00Z"
    assert only.verdict == new["verdict"]


def test_a_failed_node_without_a_measured_figure_is_drained():
    """A node whose fact checks failed before any measurement ran has no figures to compare:
    its own failure drains it all the same."""
    certificate = node_certificate("gpu-e", fail=True)
    for check in certificate["checks"]:
        check["figures"] = []
    verdict = judge_fleet([node("gpu-a", node_certificate("gpu-a")), node("gpu-e", certificate)])
    assert list(verdict.drain) == ["gpu-e"]
    assert verdict.drain["gpu-e"][0].startswith("its run failed: ")


def test_a_certificate_without_a_class_is_not_compared_with_a_class(tmp_path):
    """A run that found no class for its machine is no peer of h100 nodes: refused, named."""
    from rigcheck.fleet.nodes import FleetInputError

    for name in ("gpu-f", "gpu-g"):
        certificate = node_certificate(name)
        if name == "gpu-g":
            certificate["class"]["name"] = None
        (tmp_path / name).mkdir()
        write_certificate(tmp_path / name / "certificate.json", certificate)
    with pytest.raises(FleetInputError, match="different classes"):
        load_nodes([str(tmp_path)])
