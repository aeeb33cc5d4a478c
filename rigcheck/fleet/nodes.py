"""Finding and reading the certificates of many nodes: a shared folder, Slurm job output."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rigcheck.fleet.fields import fleet_fields
from rigcheck.jsonfile import read_json
from rigcheck.reports.certificate import FILE_NAME, CertificateError


class FleetInputError(CertificateError):
    """The fleet cannot be judged: no certificates, a bad one, or nodes of different classes."""


@dataclass(frozen=True)
class Node:
    name: str  # the host name the certificate records
    path: Path
    certificate: dict[str, Any]

    @property
    def verdict(self) -> str:
        return self.certificate["verdict"]

    @property
    def class_name(self) -> str | None:
        return self.certificate["class"]["name"]


def find_certificates(paths: list[str]) -> list[Path]:
    """Every certificate.json under the folders given (recursively), and files named directly."""
    found: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            found.extend(sorted(path.rglob(FILE_NAME)))
        else:
            raise FleetInputError(f"{given}: no such file or folder")
    if not found:
        where = ", ".join(paths)
        raise FleetInputError(
            f"no {FILE_NAME} under {where}: point at the folders the nodes' runs wrote "
            "(each run writes reports/<run id>/certificate.json)"
        )
    return found


def load_nodes(paths: list[str]) -> list[Node]:
    """One Node per host; a host run more than once counts with its latest run. Each file is
    reduced to the fields the fleet reads as it is read (rigcheck.fleet.fields)."""
    latest: dict[str, Node] = {}
    for file in find_certificates(paths):
        data = read_json(file, "certificate", CertificateError)
        certificate = fleet_fields(data, str(file))  # CertificateError names the file and spot
        node = Node(_host_name(certificate, file), file, certificate)
        seen = latest.get(node.name)
        if seen is None or _started(node) > _started(seen):
            latest[node.name] = node
    nodes = sorted(latest.values(), key=lambda n: n.name)
    check_one_class(nodes)
    return nodes


def check_one_class(nodes: list[Node]) -> None:
    classes = {n.class_name for n in nodes}
    if len(classes) > 1:
        shown = ", ".join(f"{c}: {sum(n.class_name == c for n in nodes)} nodes" for c in classes)
        raise FleetInputError(
            f"the certificates are of different classes ({shown}): "
            "compare one class at a time, one folder per class"
        )


def _host_name(certificate: dict[str, Any], file: Path) -> str:
    host = certificate["machine"].get("host")
    name = host.get("hostname") if isinstance(host, dict) else None
    # No recorded host name: the folder names the node (e.g. Slurm's per-node output folder).
    return name if isinstance(name, str) and name else os.path.basename(file.parent)


def _started(node: Node) -> str:
    return node.certificate["run"]["started_at"]
