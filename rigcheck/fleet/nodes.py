"""Finding and reading the certificates of many nodes: a shared folder, Slurm job output."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from rigcheck.fleet.fields import fleet_fields
from rigcheck.jsonfile import read_json
from rigcheck.reports.certificate import FILE_NAME, CertificateError

PARALLEL_FROM = 200  # certificates per worker process, at least: a pool's start costs ~0.1 s
CHUNK = 32  # files a worker is handed at a time


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

    @cached_property
    def figures(self) -> dict[str, dict[str, Any]]:
        """'figure label' -> the judgement, for every measured figure of the node's run (worked
        out once: the judgement, the summary and the page each read it per figure)."""
        out = {}
        for check in self.certificate["checks"]:
            for entry in check["figures"]:
                if entry.get("measured") is not None:
                    out[" ".join(p for p in (entry["figure"], entry.get("label")) if p)] = entry
        return out

    @cached_property
    def worst(self) -> dict[str, dict[str, Any]]:
        """figure name -> the node's lowest measurement of it (its slowest GPU)."""
        worst: dict[str, dict[str, Any]] = {}
        for entry in self.figures.values():
            seen = worst.get(entry["figure"])
            if seen is None or entry["measured"] < seen["measured"]:
                worst[entry["figure"]] = entry
        return worst


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
    reduced to the fields the fleet reads as it is read (rigcheck.fleet.fields), so only the
    reduced certificates are ever held; a large fleet is read on every core."""
    latest: dict[str, Node] = {}
    with _no_gc():
        for node in _read_all(find_certificates(paths)):
            seen = latest.get(node.name)
            if seen is None or _started(node) > _started(seen):
                latest[node.name] = node
    nodes = sorted(latest.values(), key=lambda n: n.name)
    check_one_class(nodes)
    return nodes


def read_node(file: Path) -> Node:
    """One certificate file as a Node; CertificateError names the file (and the spot)."""
    data = read_json(file, "certificate", CertificateError)
    certificate = fleet_fields(data, str(file))
    return Node(_host_name(certificate, file), file, certificate)


def _read_all(files: list[Path]) -> Iterator[Node]:
    """The files' Nodes in order; the first bad file raises, as when read one by one. Parsing
    JSON is most of a fleet's time (~1.5 ms per 100 KB certificate), so past PARALLEL_FROM
    files each core parses its share and only the reduced certificates cross back."""
    workers = min(_cores(), len(files) // PARALLEL_FROM)
    if workers < 2:
        yield from map(read_node, files)
        return
    with ProcessPoolExecutor(workers, initializer=gc.disable) as pool:
        yield from pool.map(read_node, files, chunksize=CHUNK)


@contextmanager
def _no_gc() -> Iterator[None]:
    """Parsed JSON holds no reference cycles, so the cycle collector only costs here: with
    thousands of certificates held, each of its passes walks them all again."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _cores() -> int:
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity else os.cpu_count() or 1


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
