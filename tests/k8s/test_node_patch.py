"""`rigcheck k8s mark`'s patch bodies: what they do to a node's labels and taints, and, applied
to a Node, valid against the Kubernetes API schemas (kubernetes-validate, strict) and the API's
label-value rule; the client calls as a dry run by default, with a stand-in for CoreV1Api."""

from __future__ import annotations

import copy
import datetime as dt
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from rigcheck.gate.k8s import (
    CAUSE,
    LABEL_VALUE,
    TAINT_KEY,
    VERDICT,
    NodeMarker,
    label_value,
    node_patch,
)

kubernetes_validate = pytest.importorskip(
    "kubernetes_validate", reason="kubernetes-validate is in the test extras (tox installs it)"
)
VERSIONS = ("1.27", kubernetes_validate.latest_version())
NOW = dt.datetime(2026, 11, 25, 18, 0, tzinfo=dt.timezone.utc)
CAUSE_LINE = "ecc_zero: GPU 3: 2 uncorrected ECC errors (+1 more failed)"
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
REPO = Path(__file__).resolve().parents[2]


def applied(patch: dict) -> dict:
    """The Node after a strategic-merge patch on a bare node: None removes a key."""
    patch = copy.deepcopy(patch)
    meta = {k: {n: v for n, v in m.items() if v is not None} for k, m in patch["metadata"].items()}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu7", **meta},
            "spec": patch["spec"]}  # fmt: skip


def schema_errors(node: dict, version: str) -> list[str]:
    try:
        kubernetes_validate.validate(node, version, strict=True)
    except kubernetes_validate.ValidationError as exc:
        return [f"{'.'.join(map(str, exc.path))}: {exc.message} (Kubernetes {version})"]
    return []


def label_errors(node: dict) -> list[str]:
    values = [*node["metadata"]["labels"].values(), *(t["value"] for t in node["spec"]["taints"])]
    return [v for v in values if len(v) > 63 or not LABEL_VALUE.match(v)]


PATCHES = {
    "fail": node_patch("fail", CAUSE_LINE, "quick", [GPU_TAINT], NOW),
    "pass": node_patch("pass", None, "quick", [GPU_TAINT], NOW),
    "incomplete": node_patch(
        "incomplete",
        "incomplete: stopped: tier quick: its 10 s time budget ran out",
        "quick",
        [],
        NOW,
    ),
}


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", PATCHES)
def test_the_patched_node_is_valid_against_the_api_schema(name, version):
    node = applied(PATCHES[name])
    assert schema_errors(node, version) == []
    assert label_errors(node) == []


def test_the_schema_check_can_fail():
    node = applied(PATCHES["fail"])
    node["spec"]["taints"][1]["effect"] = "NoSchedulee"
    node["spec"]["taints"][0]["valu"] = "x"
    assert schema_errors(node, VERSIONS[-1])
    bad = applied(node_patch("fail", "x", "quick", [], NOW))
    bad["metadata"]["labels"][VERDICT] = "has spaces: and colons"
    assert label_errors(bad) == ["has spaces: and colons"]


def test_a_failing_node_is_tainted_with_the_root_causes_key_and_keeps_other_taints():
    patch = PATCHES["fail"]
    assert patch["spec"]["taints"] == [
        GPU_TAINT, {"key": TAINT_KEY, "value": "ecc_zero", "effect": "NoSchedule"}
    ]  # fmt: skip
    assert patch["metadata"]["labels"] == {
        VERDICT: "fail", "rigcheck.dev/tier": "quick", CAUSE: "ecc_zero"
    }  # fmt: skip
    assert patch["metadata"]["annotations"] == {
        CAUSE: CAUSE_LINE, "rigcheck.dev/checked-at": "2026-11-25T18:00:00+00:00"
    }  # fmt: skip


def test_a_passing_node_loses_rigchecks_taint_only():
    ours = {"key": TAINT_KEY, "value": "ecc_zero", "effect": "NoSchedule"}
    patch = node_patch("pass", None, "quick", [GPU_TAINT, ours], NOW)
    assert patch["spec"]["taints"] == [GPU_TAINT]
    assert patch["metadata"]["labels"][CAUSE] is None  # deleted by the merge
    assert patch["metadata"]["annotations"][CAUSE] is None


def test_a_new_failure_replaces_rigchecks_old_taint():
    old = {"key": TAINT_KEY, "value": "xid", "effect": "NoSchedule"}
    taints = node_patch("fail", CAUSE_LINE, "quick", [old], NOW)["spec"]["taints"]
    assert [t["value"] for t in taints] == ["ecc_zero"]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("product_matches_class", "product_matches_class"),
        ("has spaces: and/colons", "has_spaces__and_colons"),
        ("x" * 80, "x" * 63),
        ("_leading-and-trailing.", "leading-and-trailing"),
        ("::", "unknown"),
        ("", "unknown"),
    ],
)
def test_label_value_makes_any_text_a_valid_value(text, value):
    assert label_value(text) == value
    assert LABEL_VALUE.match(label_value(text)) and len(label_value(text)) <= 63


class FakeCoreV1:
    def __init__(self, taints):
        self.node = SimpleNamespace(spec=SimpleNamespace(taints=taints))
        self.patches = []

    def read_node(self, name):
        return self.node

    def patch_node(self, name, body, **options):
        self.patches.append((name, body, options))


def test_the_marker_patches_as_a_server_side_dry_run_unless_told_to_apply():
    client = pytest.importorskip("kubernetes.client", reason="the [k8s] extra")
    api = FakeCoreV1([client.V1Taint(**GPU_TAINT)])
    marker = NodeMarker(api)
    assert marker.taints("gpu7") == [GPU_TAINT]  # as the API spells it: no time_added: null
    marker.patch("gpu7", {"b": 1}, dry_run=True)
    marker.patch("gpu7", {"b": 1}, dry_run=False)
    assert api.patches == [("gpu7", {"b": 1}, {"dry_run": "All"}), ("gpu7", {"b": 1}, {})]


def test_mark_offline_prints_the_patch_of_a_finished_run(tmp_path):
    certificate = REPO / "fixtures" / "certificates" / "h100-node-after.json"
    # timeout: a hung process only; at load 14 on 2 cores its start took over 60 s (issue 38)
    done = subprocess.run(
        [sys.executable, "-m", "rigcheck", "k8s", "mark", "--offline", "--node", "gpu7",
         "--certificate", str(certificate)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    patch = json.loads(done.stdout)
    cause = json.loads(certificate.read_text())["root_cause"]
    assert patch["metadata"]["annotations"][CAUSE] == cause
    assert patch["spec"]["taints"][0]["value"] == "driver_meets_class_minimum"
    assert patch["metadata"]["labels"]["rigcheck.dev/tier"] == "full"
    assert f"node gpu7: verdict fail: {cause} (printed only (--offline))" in done.stderr
