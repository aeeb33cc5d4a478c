"""Each gate outcome followed from the run's verdict to the node, through `rigcheck k8s mark
--apply`, the real kubernetes client and the local API server (api_server.py), on one node in
the order a cluster sees them: a failure taints it, a busy node's pass leaves the taint, the idle
run's pass clears it, an overrun (the tier's budget ran out) taints it again. Each step asserts
the node as the API server stored it, and the node's own GPU taint survives every step.

The verdicts are the project's recorded certificates (fixtures/certificates: a failed and a
passed H100 node); the busy pass is the passed one as a `--tier quick --busy-node` run names
itself, the overrun the failed one as the deadline ends a run (rigcheck/gate/deadline.py).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

pytest.importorskip("kubernetes", reason="the k8s extra (tox installs it)")

from api_server import FakeApiServer, node
from test_real_client import GPU_TAINT, kubeconfig

from rigcheck.cli import main
from rigcheck.gate.k8s import CAUSE, TAINT_KEY, VERDICT

REPO = Path(__file__).resolve().parents[2]
FAILED = json.loads((REPO / "fixtures/certificates/h100-node-after.json").read_text())
PASSED = json.loads((REPO / "fixtures/certificates/h100-node-before.json").read_text())
OVERRUN = "incomplete: stopped: tier quick: its 10 s time budget ran out"


def certificate(tmp_path: Path, name: str, data: dict, **changes) -> Path:
    data = copy.deepcopy(data) | changes
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data))
    return path


def busy_pass(tmp_path: Path) -> Path:
    run = PASSED["run"] | {"args": ["-m", "h100", "--tier", "quick", "--busy-node"]}
    return certificate(tmp_path, "busy-pass", PASSED, run=run)


def overrun(tmp_path: Path) -> Path:
    run = FAILED["run"] | {"args": ["-m", "h100", "--tier", "quick"]}
    return certificate(tmp_path, "overrun", FAILED, verdict="incomplete", root_cause=OVERRUN,
                       partial=True, partial_reason="stopped: tier quick: its 10 s time "
                       "budget ran out", run=run)  # fmt: skip


def outside_a_pod(tmp_path: Path, monkeypatch) -> None:
    """The client finds the server through a kubeconfig, as kubectl's users do. ($KUBECONFIG is
    read when the client is imported, so its default path is set here; the client's default
    configuration, which loading it replaces, is put back after the test.)"""
    from kubernetes.client import Configuration
    from kubernetes.config import kube_config

    monkeypatch.setattr(kube_config, "KUBE_CONFIG_DEFAULT_LOCATION", str(tmp_path / "kubeconfig"))
    monkeypatch.setattr(Configuration, "_default", Configuration._default)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)  # not in a pod


def marked(api: FakeApiServer, path: Path) -> tuple[int, dict]:
    code = main(["k8s", "mark", "--node", "gpu7", "--certificate", str(path), "--apply"])
    return code, copy.deepcopy(api.nodes["gpu7"])


def taints(stored: dict) -> list[str]:
    return [t["key"] for t in stored["spec"]["taints"]]


def test_failure_busy_pass_idle_pass_and_overrun_leave_the_node_as_documented(
    tmp_path, monkeypatch, capsys
):
    outside_a_pod(tmp_path, monkeypatch)
    with FakeApiServer({"gpu7": node("gpu7", [GPU_TAINT])}) as api:
        kubeconfig(tmp_path, api.url)

        code, stored = marked(api, certificate(tmp_path, "failed", FAILED))
        assert code == 1
        assert taints(stored) == ["nvidia.com/gpu", TAINT_KEY]
        assert stored["metadata"]["labels"][VERDICT] == "fail"
        assert stored["metadata"]["annotations"][CAUSE] == FAILED["root_cause"]

        code, stored = marked(api, busy_pass(tmp_path))  # judged less: clears nothing
        assert code == 0
        assert taints(stored) == ["nvidia.com/gpu", TAINT_KEY]
        assert stored["metadata"]["labels"][VERDICT] == "fail"
        assert stored["metadata"]["annotations"][CAUSE] == FAILED["root_cause"]

        code, stored = marked(api, certificate(tmp_path, "idle-pass", PASSED))
        assert code == 0
        assert taints(stored) == ["nvidia.com/gpu"]
        assert stored["metadata"]["labels"][VERDICT] == "pass"
        assert CAUSE not in stored["metadata"]["labels"]

        code, stored = marked(api, overrun(tmp_path))
        assert code == 1
        assert taints(stored) == ["nvidia.com/gpu", TAINT_KEY]
        assert stored["metadata"]["labels"][VERDICT] == "incomplete"
        assert stored["metadata"]["annotations"][CAUSE] == OVERRUN
    capsys.readouterr()


def test_a_busy_pass_on_an_untainted_node_labels_it_passed(tmp_path, monkeypatch, capsys):
    outside_a_pod(tmp_path, monkeypatch)
    with FakeApiServer({"gpu7": node("gpu7", [GPU_TAINT])}) as api:
        kubeconfig(tmp_path, api.url)
        code, stored = marked(api, busy_pass(tmp_path))
    assert code == 0 and taints(stored) == ["nvidia.com/gpu"]
    assert stored["metadata"]["labels"][VERDICT] == "pass"
    assert stored["metadata"]["labels"]["rigcheck.dev/tier"] == "quick-busy"
    capsys.readouterr()
