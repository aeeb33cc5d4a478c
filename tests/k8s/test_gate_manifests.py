"""The gate's two Kubernetes manifests hold the design docs/k8s describes (issue 25): the
DaemonSet beside the node's work holds no GPU, sees them all through the nvidia runtime, and
runs the busy-node quick tier; the idle CronJob holds every GPU (so it starts only on a free
node), one per node, and runs the full quick tier. Both can re-check a node rigcheck tainted.
Their validity against the API schemas is tests/k8s/test_manifests.py's."""

from __future__ import annotations

from pathlib import Path

import yaml

K8S = Path(__file__).resolve().parents[2] / "docs" / "k8s"


def kind(path: str, name: str) -> dict:
    docs = [d for d in yaml.safe_load_all((K8S / path).read_text()) if d]
    return next(d for d in docs if d["kind"] == name)


def pod_of(workload: dict) -> dict:
    spec = workload["spec"]
    spec = spec["jobTemplate"]["spec"] if "jobTemplate" in spec else spec
    return spec["template"]["spec"]


def command_of(container: dict) -> str:
    return " ".join(container.get("command", []) + container.get("args", []))


def env_of(container: dict) -> dict[str, str]:
    return {e["name"]: e.get("value") for e in container.get("env", [])}


def tolerates_rigcheck(pod: dict) -> bool:
    return any(t.get("key") == "rigcheck.dev/unhealthy" for t in pod.get("tolerations", []))


def test_the_daemonset_holds_no_gpu_and_judges_only_what_a_busy_node_allows():
    pod = pod_of(kind("rigcheck-health-daemonset.yaml", "DaemonSet"))
    (container,) = pod["containers"]
    resources = container.get("resources", {})
    gpu_asks = [k for part in resources.values() for k in part if k.endswith("/gpu")]
    assert gpu_asks == []  # a never-ending pod must not hold the node's GPUs
    assert pod["runtimeClassName"] == "nvidia"
    assert env_of(container)["NVIDIA_VISIBLE_DEVICES"] == "all"
    assert "rigcheck k8s mark" in command_of(container)
    assert "--busy-node" in command_of(container)
    assert "--apply" not in command_of(container).split("#")[0]  # a dry run as shipped
    assert tolerates_rigcheck(pod)


def test_the_idle_check_holds_every_gpu_one_pod_per_node_and_judges_everything():
    cron = kind("rigcheck-idle-check.yaml", "CronJob")
    job = cron["spec"]["jobTemplate"]["spec"]
    pod = pod_of(cron)
    (container,) = pod["containers"]
    assert int(container["resources"]["limits"]["nvidia.com/gpu"]) == 8
    assert "--busy-node" not in command_of(container)
    assert container["command"][:3] == ["rigcheck", "k8s", "mark"]
    assert "--apply" not in container["command"]  # a dry run as shipped
    (term,) = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["topologyKey"] == "kubernetes.io/hostname"
    assert term["labelSelector"]["matchLabels"] == cron["spec"]["jobTemplate"]["spec"][
        "template"]["metadata"]["labels"]  # fmt: skip
    assert job["backoffLimit"] == 0 and job["activeDeadlineSeconds"] > 0
    assert cron["spec"]["concurrencyPolicy"] == "Forbid"
    assert tolerates_rigcheck(pod)
    assert (
        pod["serviceAccountName"]
        == pod_of(kind("rigcheck-health-daemonset.yaml", "DaemonSet"))["serviceAccountName"]
    )


def test_the_idle_check_goes_first_to_the_nodes_rigcheck_marked_failing():
    """Its pass is the only one that clears rigcheck's taint: a round of a few pods should reach
    the nodes waiting on it before healthy ones (rigcheck/gate/k8s.py writes the label)."""
    from rigcheck.gate.k8s import VERDICT

    pod = pod_of(kind("rigcheck-idle-check.yaml", "CronJob"))
    (term,) = pod["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    (expression,) = term["preference"]["matchExpressions"]
    assert expression == {"key": VERDICT, "operator": "In", "values": ["fail", "incomplete"]}
