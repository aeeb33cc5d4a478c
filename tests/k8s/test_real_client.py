"""`rigcheck k8s mark` through the REAL kubernetes Python client (its ApiClient, REST layer
and urllib3), against a local stand-in for the API server (api_server.py): what goes over the
wire for a dry run and for --apply, and what a user sees for an unknown node, a ServiceAccount
without rights, and an API server that does not answer. The CLI finds the server through a
kubeconfig file, as kubectl's users do (KUBECONFIG)."""

from __future__ import annotations

import datetime as dt
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("kubernetes", reason="the k8s extra (tox installs it)")

from api_server import FakeApiServer, node

from rigcheck.gate.k8s import TAINT_KEY, KubernetesError, NodeMarker

REPO = Path(__file__).resolve().parents[2]
FAILED = REPO / "fixtures" / "certificates" / "h100-node-after.json"
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
STRATEGIC = "application/strategic-merge-patch+json"


def kubeconfig(tmp_path: Path, server: str) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "test",
        "clusters": [{"name": "test", "cluster": {"server": server}}],
        "users": [{"name": "test", "user": {"token": "not-a-secret"}}],
        "contexts": [{"name": "test", "context": {"cluster": "test", "user": "test"}}],
    }))  # fmt: skip
    return path


def mark(tmp_path: Path, server: str, *args: str) -> subprocess.CompletedProcess:
    """`rigcheck k8s mark` in a process of its own. A Python that dies of an uncaught error
    exits 1, the code of a failed node: a crash must fail here, with its stderr, and not pass
    as the verdict (a run that exited 1 having sent nothing failed later as an IndexError on
    the requests the server saw, and said nothing of why)."""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "KUBECONFIG": str(kubeconfig(tmp_path, server)),
    }  # not in a pod: no in-cluster env
    done = subprocess.run(
        [sys.executable, "-m", "rigcheck", "k8s", "mark", "--certificate", str(FAILED), *args],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    return done


def marked_failed(done: subprocess.CompletedProcess, api: FakeApiServer) -> list:
    """The requests of a run that marked the failed node: exit 1 and the verdict line said."""
    last = done.stderr.strip().splitlines()[-1:] or [""]
    assert done.returncode == 1 and last[0].startswith(
        "rigcheck k8s mark: node gpu7: verdict fail"
    ), done.stderr
    assert [r.method for r in api.seen] == ["GET", "PATCH"], (api.seen, done.stderr)
    return api.seen


def test_a_dry_run_sends_a_strategic_merge_patch_with_dry_run_all(tmp_path):
    with FakeApiServer({"gpu7": node("gpu7", [GPU_TAINT])}) as api:
        done = mark(tmp_path, api.url, "--node", "gpu7")
        stored = api.nodes["gpu7"]
    read, patch = marked_failed(done, api)  # the certificate failed: exit 1, as documented
    assert (read.method, read.path) == ("GET", "/api/v1/nodes/gpu7")
    assert (patch.method, patch.path, patch.query) == (
        "PATCH",
        "/api/v1/nodes/gpu7",
        {"dryRun": ["All"]},
    )
    assert patch.content_type == STRATEGIC
    cause = json.loads(FAILED.read_text())["root_cause"]
    assert patch.body["metadata"]["annotations"]["rigcheck.dev/root-cause"] == cause
    assert patch.body["spec"]["taints"][0] == GPU_TAINT  # the node's own taint kept
    assert patch.body["spec"]["taints"][1]["key"] == TAINT_KEY
    assert stored["spec"]["taints"] == [GPU_TAINT]  # dry run: nothing stored
    assert "(dry run, nothing stored)" in done.stderr


def test_apply_sends_the_same_patch_without_dry_run_and_it_is_stored(tmp_path):
    with FakeApiServer({"gpu7": node("gpu7", [GPU_TAINT])}) as api:
        done = mark(tmp_path, api.url, "--node", "gpu7", "--apply")
        stored = api.nodes["gpu7"]
    _, patch = marked_failed(done, api)
    assert patch.method == "PATCH" and patch.query == {} and patch.content_type == STRATEGIC
    assert [t["key"] for t in stored["spec"]["taints"]] == ["nvidia.com/gpu", TAINT_KEY]
    assert stored["metadata"]["labels"]["rigcheck.dev/verdict"] == "fail"


@pytest.mark.parametrize(
    ("nodes", "refuse", "line"),
    [
        ({}, set(), "rigcheck: read node gpu7: 404 Not Found (no such node: --node, or "
                    "$NODE_NAME from spec.nodeName, names the node)"),
        ({"gpu7": node("gpu7")}, {"get"},
         "rigcheck: read node gpu7: 403 Forbidden (its ServiceAccount needs get and patch on "
         "nodes: docs/k8s's ClusterRole)"),
        ({"gpu7": node("gpu7")}, {"patch"},
         "rigcheck: patch node gpu7: 403 Forbidden (its ServiceAccount needs get and patch on "
         "nodes: docs/k8s's ClusterRole)"),
    ],
)  # fmt: skip
def test_a_refusal_is_one_actionable_line_and_exit_2(tmp_path, nodes, refuse, line):
    with FakeApiServer(nodes, refuse=refuse) as api:
        done = mark(tmp_path, api.url, "--node", "gpu7")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == line
    assert "Traceback" not in done.stderr


def test_an_api_server_that_does_not_answer_is_one_line_and_exit_2(tmp_path):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]  # bound, never listening: connection refused
        done = mark(tmp_path, f"http://127.0.0.1:{port}", "--node", "gpu7")
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"rigcheck: read node gpu7: the API server at http://127.0.0.1:{port} "
                           "did not answer (MaxRetryError)")  # fmt: skip
    assert "Traceback" not in done.stderr


def test_the_marker_reads_taints_as_the_client_returns_them(tmp_path):
    from kubernetes import client

    config = client.Configuration(host="http://127.0.0.1:1")
    with FakeApiServer({"gpu7": node("gpu7", [GPU_TAINT])}) as api:
        config.host = api.url
        marker = NodeMarker(client.CoreV1Api(client.ApiClient(config)))
        assert marker.taints("gpu7") == [GPU_TAINT]
        with pytest.raises(KubernetesError, match="404 Not Found"):
            marker.taints("gpu8")


def test_other_taints_go_back_with_every_field_as_the_api_spells_it(tmp_path):
    # The node controller's NoExecute taints carry timeAdded: the client's model calls it
    # time_added, which the API server would drop as an unknown field. Found by this test.
    unreachable = {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute",
                   "timeAdded": "2026-11-25T17:00:00Z"}  # fmt: skip
    with FakeApiServer({"gpu7": node("gpu7", [unreachable, GPU_TAINT])}) as api:
        done = mark(tmp_path, api.url, "--node", "gpu7")
    _, patch = marked_failed(done, api)
    sent, gpu = patch.body["spec"]["taints"][:2]
    assert gpu == GPU_TAINT and sorted(sent) == ["effect", "key", "timeAdded"]
    assert {k: sent[k] for k in ("key", "effect")} == {k: unreachable[k] for k in ("key", "effect")}
    # RFC 3339 either way (the client writes +00:00 for Z): the same instant goes back.
    when = dt.datetime.fromisoformat(sent["timeAdded"].replace("Z", "+00:00"))
    assert when == dt.datetime(2026, 11, 25, 17, 0, tzinfo=dt.timezone.utc)


@pytest.mark.parametrize(
    "kubeconfig_text",
    [
        '{"current-context": "t", "clusters": [{"name": "t", "cluster": {"server": 123}}], '
        '"users": [{"name": "t", "user": {"token": "x"}}], '
        '"contexts": [{"name": "t", "context": {"cluster": "t", "user": "t"}}]}',
        '{"current-context": "t", "contexts": [{"name": "t", "context": "x"}]}',
        "[]",
    ],
)
def test_a_kubeconfig_of_the_wrong_shape_is_one_line_not_a_crash(
    kubeconfig_text, tmp_path, monkeypatch
):
    """Each was an AttributeError or TypeError traceback: exit 1, a failed node's code, and no
    request sent (what the flake above looked like)."""
    from kubernetes.client import Configuration
    from kubernetes.config import kube_config

    from rigcheck.gate.k8s import _core_api

    path = tmp_path / "kubeconfig"
    path.write_text(kubeconfig_text)
    monkeypatch.setattr(kube_config, "KUBE_CONFIG_DEFAULT_LOCATION", str(path))
    monkeypatch.setattr(Configuration, "_default", Configuration._default)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)  # not in a pod
    with pytest.raises(KubernetesError, match=r"^no cluster to talk to: not in a pod, and "):
        _core_api()
