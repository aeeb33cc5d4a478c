"""docs/k8s/*.yaml against the Kubernetes API schema, without a cluster.

kubernetes-validate (PyPI) ships the Kubernetes OpenAPI schemas as JSON Schema, per release;
strict mode refuses fields the API does not have, so a misspelt or misplaced field fails here as
`kubectl apply --validate=strict` would. The PyTorchJob (a CRD, not in those schemas) is walked
through the Kubeflow training SDK's models (kubeflow_models.py) and its pod template and metadata
validated as Kubernetes types. docs/distributed.md says what this does and does not cover.
"""

from pathlib import Path

import pytest
import yaml

kubernetes_validate = pytest.importorskip(
    "kubernetes_validate", reason="kubernetes-validate is in the test extras (tox installs it)"
)
pytest.importorskip("kubeflow.training", reason="kubeflow-training is in the test extras")
from kubeflow_models import walk  # noqa: E402  (needs kubeflow-training, skipped above)

K8S = Path(__file__).resolve().parents[2] / "docs" / "k8s"
MANIFESTS = sorted(K8S.glob("*.yaml"))
# The oldest release the manifests are meant for (Indexed Jobs, podAntiAffinity, emptyDir
# sizeLimit are all older) and the newest schema the package ships.
VERSIONS = ("1.27", kubernetes_validate.latest_version())
# Kubernetes types the PyTorchJob embeds, and a built-in kind that carries each one to validate.
CARRIERS = {
    "V1PodTemplateSpec": lambda doc: {"apiVersion": "v1", "kind": "PodTemplate",
                                      "metadata": {"name": "check"}, "template": doc},
    "V1ObjectMeta": lambda doc: {"apiVersion": "v1", "kind": "ConfigMap", "metadata": doc},
}  # fmt: skip


def documents(path: Path) -> list[dict]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def kube_errors(doc: dict, version: str) -> list[str]:
    try:
        kubernetes_validate.validate(doc, version, strict=True)
    except kubernetes_validate.ValidationError as exc:
        where = ".".join(map(str, exc.path)) or "(top)"
        return [f"{doc['kind']} at {where}: {exc.message} (Kubernetes {version})"]
    return []


def pytorchjob_errors(doc: dict, version: str) -> list[str]:
    errors, kube = walk(doc, "KubeflowOrgV1PyTorchJob", "$")
    for where, type_name, data in kube:
        if type_name not in CARRIERS:
            errors.append(f"{where}: {type_name} is not validated by this test: add a carrier")
            continue
        errors += [f"{where}: {e}" for e in kube_errors(CARRIERS[type_name](data), version)]
    return errors


def test_every_manifest_is_found():
    assert [p.name for p in MANIFESTS] == [
        "rigcheck-blame-job.yaml",
        "rigcheck-health-daemonset.yaml",
        "rigcheck-idle-check.yaml",
        "rigcheck-job.yaml",
        "rigcheck-pytorchjob.yaml",
    ]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("path", MANIFESTS, ids=[p.name for p in MANIFESTS])
def test_manifest_valid_against_the_api_schema(path, version):
    errors = []
    for doc in documents(path):
        if doc["kind"] == "PyTorchJob":
            errors += pytorchjob_errors(doc, version)
        else:
            errors += kube_errors(doc, version)
    assert not errors, f"{path.name}: " + "; ".join(errors)


def test_a_misspelt_field_fails(tmp_path):
    """The check can fail: a typo in each manifest's pod spec, and in the PyTorchJob's own spec."""
    job = documents(K8S / "rigcheck-job.yaml")[1]
    job["spec"]["template"]["spec"]["restartPolicyy"] = "Never"
    assert "restartPolicyy" in " ".join(kube_errors(job, VERSIONS[-1]))
    torch_job = documents(K8S / "rigcheck-pytorchjob.yaml")[0]
    torch_job["spec"]["nprocPerNodes"] = torch_job["spec"].pop("nprocPerNode")
    worker = torch_job["spec"]["pytorchReplicaSpecs"]["Worker"]
    worker["template"]["spec"]["containers"][0]["resource"] = {}
    worker["replicas"] = "2"
    errors = " ".join(pytorchjob_errors(torch_job, VERSIONS[-1]))
    assert "$.spec.nprocPerNodes: not a field of KubeflowOrgV1PyTorchJobSpec" in errors
    assert "'2' is not a int" in errors and "'resource'" in errors, errors
