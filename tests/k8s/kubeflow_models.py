"""A PyTorchJob checked field by field against the Kubeflow training operator's OpenAPI models.

The training operator's CRD schema is not installable offline, but its Python SDK
(kubeflow-training on PyPI) ships models generated from the same OpenAPI spec as the CRD: each
model's attribute_map names the JSON fields and openapi_types their types. This walks a manifest
through them: an unknown field (a typo such as `nprocPerNodes`) or a wrong type is an error with
its path. The Kubernetes types inside (ObjectMeta, PodTemplateSpec) are not walked here: they are
collected for kubernetes-validate, which has the real Kubernetes schemas. What the models cannot
say (enums, minimums, the CRD's x-kubernetes-validations) is not checked.
"""

from __future__ import annotations

import re
from typing import Any

from kubeflow.training import models

SCALARS = {"str": str, "int": int, "bool": bool, "float": (int, float), "object": object}


def walk(data: Any, type_name: str, where: str) -> tuple[list[str], list[tuple[str, str, Any]]]:
    """(errors, [(where, Kubernetes type, data)] left for kubernetes-validate)."""
    errors: list[str] = []
    kube: list[tuple[str, str, Any]] = []
    _walk(data, type_name, where, errors, kube)
    return errors, kube


def _walk(data, type_name, where, errors, kube) -> None:
    if type_name in SCALARS:
        ok = isinstance(data, SCALARS[type_name]) and not (
            type_name == "int" and isinstance(data, bool)
        )
        if not ok:
            errors.append(f"{where}: {data!r} is not a {type_name}")
        return
    inner = re.fullmatch(r"list\[(.+)\]", type_name)
    if inner:
        if not isinstance(data, list):
            errors.append(f"{where}: expected a list")
            return
        for i, item in enumerate(data):
            _walk(item, inner[1], f"{where}[{i}]", errors, kube)
        return
    inner = re.fullmatch(r"dict\(str, (.+)\)", type_name)
    if inner:
        if not isinstance(data, dict):
            errors.append(f"{where}: expected a mapping")
            return
        for key, item in data.items():
            _walk(item, inner[1], f"{where}.{key}", errors, kube)
        return
    if not type_name.startswith("KubeflowOrgV1"):
        kube.append((where, type_name, data))  # a Kubernetes type: kubernetes-validate's
        return
    _walk_model(data, getattr(models, type_name), where, errors, kube)


def _walk_model(data, model, where, errors, kube) -> None:
    if not isinstance(data, dict):
        errors.append(f"{where}: expected a mapping ({model.__name__})")
        return
    by_json = {json_key: attr for attr, json_key in model.attribute_map.items()}
    for key, value in data.items():
        if key not in by_json:
            errors.append(
                f"{where}.{key}: not a field of {model.__name__} (fields: {sorted(by_json)})"
            )
            continue
        _walk(value, model.openapi_types[by_json[key]], f"{where}.{key}", errors, kube)
