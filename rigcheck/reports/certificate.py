"""The certificate: one JSON document saying what a run found, checked by its JSON Schema."""

from __future__ import annotations

import json
import os
from collections import Counter
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

import jsonschema

import rigcheck
from rigcheck.errors import RigcheckError
from rigcheck.facts.probe import ERROR_KEY, is_error
from rigcheck.jsonfile import read_json
from rigcheck.layout import ROOT_DIR
from rigcheck.paths import write_atomic
from rigcheck.reports.masking import masked, secrets_in
from rigcheck.reports.outcome import OUTCOMES
from rigcheck.reports.root_cause import root_cause
from rigcheck.spec import Spec
from rigcheck.verdict import FAIL, WARN

SCHEMA_VERSION = 1
SCHEMA_PATH = Path(__file__).with_name("certificate.schema.json")
FILE_NAME = "certificate.json"
INCOMPLETE = "incomplete"
# Versions a reader of the certificate asks for first, as dotted fact paths.
SOFTWARE_FACTS = {
    "python": "host.python",
    "torch": "software.torch.version",
    "torch_cuda": "software.torch.cuda_version",
    "torch_hip": "software.torch.hip_version",
    "cudnn": "software.torch.cudnn_version",
    "nccl": "software.torch.nccl_version",
    "nvidia_driver": "software.nvidia_driver.version",
    "cuda_driver": "software.nvidia_driver.cuda_driver_version",
    "nvcc": "software.nvcc.version",
    "flash_attn": "software.flash_attn.version",
}
TOOLS = ("pytest", "pytest-benchmark", "nvidia-ml-py", "jsonschema")


REGRESSED = "regressed"


class CertificateError(RigcheckError):
    """A certificate file is missing, unreadable or does not match its schema."""


def build_certificate(
    *,
    run: dict[str, Any],
    target: Any,
    checks: list[dict[str, Any]],
    selected: list[str],
    exit_status: int | None,
    partial_reason: str | None,
    unmask: bool = False,
    regressions: list[dict[str, str]] | None = None,
    mask_here: bool = True,
) -> dict[str, Any]:
    """Assemble the certificate; serials and UUIDs masked everywhere unless `unmask`
    (`mask_here=False`: left to the caller, rigcheck.reports.live_certificate)."""
    machine = target.facts.data
    done = {c["id"] for c in checks}
    certificate = {
        "schema_version": SCHEMA_VERSION,
        "verdict": overall_verdict(checks, partial_reason is not None),
        "partial": partial_reason is not None,
        "partial_reason": partial_reason,
        "root_cause": None,  # set below, once the verdict is final
        "exit_status": exit_status,
        "summary": summarize(checks, len(selected)),
        "run": {"rigcheck_version": rigcheck.__version__, **run},
        "class": class_entry(target),
        "software": software_versions(machine),
        "machine": machine,
        "masked": not unmask,
        "checks": checks,
        "not_run": [node_id for node_id in selected if node_id not in done],
    }
    if regressions:  # --benchmark-compare-fail: slower than the stored run, beyond its limit
        certificate["regressions"] = regressions
        if certificate["verdict"] != FAIL:
            certificate["verdict"] = REGRESSED
    certificate["root_cause"] = root_cause(certificate)  # the line a drain or taint repeats
    return certificate if unmask or not mask_here else masked(certificate, secrets_in(machine))


def overall_verdict(checks: list[dict[str, Any]], partial: bool) -> str:
    """fail beats everything; a run that did not finish is never a pass."""
    outcomes = {c["outcome"] for c in checks}
    if FAIL in outcomes:
        return FAIL
    if partial:
        return INCOMPLETE
    return WARN if WARN in outcomes else "pass"


def summarize(checks: list[dict[str, Any]], selected: int) -> dict[str, int]:
    counts = Counter(c["outcome"] for c in checks)
    return {
        "selected": selected,
        "done": len(checks),
        **{o: counts[o] for o in OUTCOMES},
        "measured": measured_count(checks),
    }


def measured_count(checks: list[dict[str, Any]]) -> int:
    """How many figures were judged on a value (timed, or replayed): 0 for a facts-only run,
    which its verdict must not let pass for a check of the machine's speed (issue 24)."""
    return sum(1 for c in checks for f in c.get("figures") or [] if f.get("measured") is not None)


def class_entry(target: Any) -> dict[str, Any]:
    spec: Spec | None = target.spec
    if spec is None:
        return {"name": None, "how": target.how}
    return {
        "name": spec.name,
        "how": target.how,
        "title": spec.title,
        "backend": spec.backend,
        "spec_file": _shown_path(spec.path),
        "spec_version": spec.data["spec_version"],
        "platform": getattr(target, "platform", None),  # the spec as adjusted for it
    }


def _shown_path(path: Path) -> str:
    """expected/h100.json for the checkout's own specs; the full path for a private set."""
    root = ROOT_DIR
    try:
        return str(Path(path).resolve().relative_to(root))
    except ValueError:
        return str(path)


def software_versions(machine: dict[str, Any]) -> dict[str, str | None]:
    """What was tested (from the facts) and what tested it (this process's packages)."""
    versions = {name: _fact_text(machine, path) for name, path in SOFTWARE_FACTS.items()}
    return {**versions, **_tool_versions()}


@cache
def _tool_versions() -> dict[str, str | None]:
    """Looked up once per process: the certificate is rewritten after every check."""
    versions: dict[str, str | None] = {}
    for tool in TOOLS:
        try:
            versions[tool] = metadata.version(tool)
        except metadata.PackageNotFoundError:
            versions[tool] = None
    versions["rigcheck"] = rigcheck.__version__
    return versions


def _fact_text(machine: dict[str, Any], path: str) -> str | None:
    node: Any = machine
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    if is_error(node):
        return f"unreadable: {node[ERROR_KEY]}"
    return None if node is None or isinstance(node, dict | list) else str(node)


def describe_figure(judgement: dict[str, Any], spec: Spec | None, label: str | None) -> dict:
    """A Judgement with the spec's definition and every tier's source, for the reader."""
    figure = spec.figures.get(judgement.get("figure", "")) if spec is not None else None
    figure = figure or {}
    sources = {t: (figure.get(t) or {}).get("source") for t in ("datasheet", "achievable", "floor")}
    return {
        "label": label,
        **judgement,
        "definition": figure.get("definition"),
        "sources": sources,
    }


def validate_certificate(data: Any, source: str) -> None:
    error = jsonschema.exceptions.best_match(_validator().iter_errors(data))
    if error is not None:
        where = "$" + "".join(
            f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path
        )
        raise CertificateError(f"{source}: not a valid certificate at {where}: {error.message}")


@cache
def _validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def certificate_path(path: str | os.PathLike[str]) -> Path:
    """A certificate file, or a run folder holding one."""
    path = Path(path)
    return path / FILE_NAME if path.is_dir() else path


def load_certificate(path: str | os.PathLike[str]) -> dict[str, Any]:
    file = certificate_path(path)
    data = read_json(file, "certificate", CertificateError)
    validate_certificate(data, str(file))
    return data


def write_certificate(path: Path, certificate: dict[str, Any]) -> None:
    write_atomic(path, json.dumps(certificate, indent=2, sort_keys=False) + "\n")


def flatten(node: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """Dotted paths to leaves; a list of plain values is one leaf, a list of objects is not."""
    if isinstance(node, dict) and node and "error" not in node:
        return [kv for k, v in node.items() for kv in flatten(v, f"{prefix}{k}.")]
    if isinstance(node, list) and node and all(isinstance(v, dict) for v in node):
        return [kv for i, v in enumerate(node) for kv in flatten(v, f"{prefix}{i}.")]
    return [(prefix.rstrip("."), node)]
